"""A Go package that already fails to build at HEAD, and an edit that has nothing to do
with it (issue 27's truth gap): github.com/hashicorp/golang-lru/v2 v2.0.7 from the Go module
proxy, committed, then its root package broken in a second commit (`var _ = undefinedAtHead`
in lru.go). Each round edits `simplelru/lru.go`'s `Len` so that nothing its tests see changes
(`+ k - k`, a new k each time, so go compiles it anew); `test.scoped` tests simplelru and the
root package, which imports it and does not build. The habitat CLIs (`--habitat NAME=CLI`,
two or more) verify in turn through their own warm host, HABITAT_HOME and GOCACHE; then
`go test -count=1 ./...` once per round in a GOCACHE of its own.

The right verdict: `test.scoped` not red (the root package's build failure is HEAD's, listed
as pre-existing); the ladder's state is then the rest's (golang-lru configures golangci-lint
in .golangci.yml: without it installed the ladder is `incomplete`, never green).

    .venv/bin/python bench/ladder/go_head_broken.py --rounds 3 \\
        --habitat before=/tmp/x/before/habitat --habitat after=/tmp/x/after/habitat \\
        --out docs/bench-data/go_head_broken-2026-12-07.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
from _report import print_table

MODULE = "github.com/hashicorp/golang-lru/v2@v2.0.7"
LINE = "return c.evictList.Length()"


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _prepare(work: Path) -> Path:
    got = subprocess.run(
        ["go", "mod", "download", "-json", MODULE],
        cwd=work,
        check=True,
        capture_output=True,
        text=True,
    )
    root = work / "golang-lru"
    shutil.copytree(json.loads(got.stdout)["Dir"], root)
    subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", MODULE)
    with (root / "lru.go").open("a", encoding="utf-8") as f:
        f.write("\nvar _ = undefinedAtHead\n")
    _git(root, "commit", "-qam", "the root package does not build")
    return root


def _verify(cli: str, root: Path, env: dict[str, str]) -> dict[str, Any]:
    started = time.monotonic()
    out = subprocess.run(
        [cli, "verify", "--json", "--project", str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    result = json.loads(out.stdout[out.stdout.find("{") :])
    scoped: dict[str, Any] = next((r for r in result["rungs"] if r["rung"] == "test.scoped"), {})
    return {
        "state": result["state"],
        "wall_s": round(wall, 3),
        "scoped": scoped.get("state"),
        "reason": scoped.get("reason"),
        "baseline": scoped.get("baseline"),
        "new": scoped.get("new_findings"),
        "preexisting": scoped.get("preexisting_findings"),
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--habitat", action="append", required=True, help="NAME=CLI")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sides = dict(h.split("=", 1) for h in args.habitat)
    work = Path(tempfile.mkdtemp(prefix="go-head-broken-"))
    rows: list[dict[str, Any]] = []
    try:
        root = _prepare(work)
        envs = {
            name: {
                **os.environ,
                "HABITAT_HOME": str(work / f"home-{name}"),
                "GOCACHE": str(work / f"gocache-{name}"),
            }
            for name in sides
        }
        reference = {**os.environ, "GOCACHE": str(work / "gocache-go-test")}
        for name, cli in sides.items():
            subprocess.run(["go", "test", "./..."], cwd=root, env=envs[name], capture_output=True)
            for verb in (["trust"], ["host", "start"]):
                subprocess.run(
                    [cli, *verb, "--project", str(root)],
                    env=envs[name],
                    capture_output=True,
                    check=True,
                )
        subprocess.run(["go", "test", "./..."], cwd=root, env=reference, capture_output=True)
        source = (root / "simplelru" / "lru.go").read_text(encoding="utf-8")
        k = 0
        for rnd in range(args.rounds):
            order = list(sides) if rnd % 2 == 0 else list(sides)[::-1]
            for name in order:
                k += 1
                edited = source.replace(LINE, f"{LINE} + {k} - {k}")
                (root / "simplelru" / "lru.go").write_text(edited, encoding="utf-8")
                rows.append({"round": rnd, "side": name, **_verify(sides[name], root, envs[name])})
                print(rows[-1], flush=True)
            started = time.monotonic()
            subprocess.run(
                ["go", "test", "-count=1", "./..."], cwd=root, env=reference, capture_output=True
            )
            wall = round(time.monotonic() - started, 3)
            rows.append(
                {"round": rnd, "side": "go test", "wall_s": wall, "load": os.getloadavg()[0]}
            )
            print(rows[-1], flush=True)
    finally:
        for name, cli in sides.items():
            subprocess.run(
                [cli, "host", "stop", "--project", str(work / "golang-lru")],
                env={**os.environ, "HABITAT_HOME": str(work / f"home-{name}")},
                capture_output=True,
            )
        shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps({"module": MODULE, "rows": rows}, indent=1), encoding="utf-8")
    table = []
    full = statistics.median(r["wall_s"] for r in rows if r["side"] == "go test")
    for name in [*sides, "go test"]:
        mine = [r for r in rows if r["side"] == name]
        wall = statistics.median(r["wall_s"] for r in mine)
        states = ", ".join(sorted({f"{r.get('state', '')}/{r.get('scoped', '')}" for r in mine}))
        load = statistics.median(r["load"] for r in mine)
        table.append(
            [name, str(len(mine)), states, f"{wall:.2f}", f"{wall / full:.2f}", f"{load:.0f}"]
        )
    print_table(
        "A package broken at HEAD, an unrelated edit (golang-lru v2.0.7)",
        ["side", "n", "ladder / test.scoped", "wall p50 s", "÷ go test ./...", "load p50"],
        table,
    )


if __name__ == "__main__":
    main()
