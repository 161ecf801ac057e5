"""Comment-only edits of a Node project's source through a warm host (issue 27): the
verdict's wall and rungs with two habitats' code (`before`, `after`: each a `git archive` of
its src), interleaved edit by edit, each on its own host and home, and the edited file's own
vitest run beside as the peer. Three edits are prose comments outside any function (the
toolchain skips compile.project and test.scoped for them); the fourth, a comment inside a
function, is the control that must still run them.

    .venv/bin/python bench/ladder/node_comment_edits.py PROJECT OUT.json \
        --side before=/tmp/base/src --side after=/tmp/after/src

PROJECT: destr 2.0.5 (unjs/destr at v2.0.5, `npm install`); its src/index.ts is edited.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HABITAT = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "habitat"
FILE = "src/index.ts"
TEST = "test/index.test.ts"
EDITS: list[tuple[str, Callable[[str], str]]] = [
    (
        "prose line above a function",
        lambda t: t.replace(
            "export function destr", "// Parses JSON safely.\nexport function destr", 1
        ),
    ),
    (
        "JSDoc wording",
        lambda t: t.replace(
            "export function destr", "/** Parse a string. */\nexport function destr", 1
        ),
    ),
    ("trailing comment at the end", lambda t: t + "\n// end of module\n"),
    (
        "a comment inside a function (runs)",
        lambda t: t.replace(
            '  if (typeof value !== "string") {',
            '  // not a string: as it is\n  if (typeof value !== "string") {',
            1,
        ),
    ),
]


def _run(argv: list[str], root: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--side", action="append", required=True, help="LABEL=SRC")
    parser.add_argument("--homes", type=Path, default=Path("/tmp/node-comment-homes"))
    args = parser.parse_args()
    root: Path = args.project
    sides = dict(s.split("=", 1) for s in args.side)
    envs = {
        label: {**os.environ, "HABITAT_HOME": str(args.homes / label), "PYTHONPATH": src}
        for label, src in sides.items()
    }
    for env in envs.values():
        subprocess.run(["rm", "-rf", env["HABITAT_HOME"]], check=True)
        _run([str(HABITAT), "host", "start", "--project", str(root)], root, env)
        _run([str(HABITAT), "verify", "--json"], root, env)  # trusts it: the warm-up starts
    source = root / FILE
    original = source.read_text(encoding="utf-8")
    rows: list[dict[str, Any]] = []
    try:
        for i, (name, edit) in enumerate(EDITS):
            order = list(sides) if i % 2 == 0 else list(sides)[::-1]
            for label in order:
                source.write_text(edit(original), encoding="utf-8")
                wall, out = _run([str(HABITAT), "verify", "--json"], root, envs[label])
                result = json.loads(out[out.find("{") :])
                source.write_text(original, encoding="utf-8")
                peer, _ = _run(["npx", "vitest", "run", TEST], root, dict(os.environ))
                row = {
                    "edit": name,
                    "side": label,
                    "verify_wall_s": round(wall, 2),
                    "state": result["state"],
                    "rungs": {
                        r["rung"]: [r["state"], r.get("duration_s"), (r.get("reason") or "")[:120]]
                        for r in result["rungs"]
                    },
                    "vitest_file_s": round(peer, 2),
                    "load": round(os.getloadavg()[0], 1),
                }
                print(json.dumps(row), flush=True)
                rows.append(row)
    finally:
        source.write_text(original, encoding="utf-8")
        for env in envs.values():
            _run([str(HABITAT), "host", "stop", "--project", str(root)], root, env)
    payload = {"project": "destr 2.0.5", "command": "see the module", "rows": rows}
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
