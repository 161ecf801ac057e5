"""TypeScript project references on a real monorepo (issue 27): `compile.project` through a
host against `tsc -b` by hand, per edit, interleaved, on a copy of the same tree each.

The project: microsoft/vscode-languageserver-node (brought here with the search tool's
fetch, never committed): a solution tsconfig whose references reach 9 packages' projects
(types, textDocument, jsonrpc, protocol, server, client, their tests, tools), composite, each
importing its siblings by package name through `node_modules` links, as its own
`build/bin/symlink.js` makes them; typescript 6. Prepared by hand (the root's
devDependencies cut to the type check's, `npm install --ignore-scripts`, the links), see
docs/benchmarks.md. `tsc -b` runs in a second copy (`--peer`), where it writes its outputs
and build info and keeps them between edits, as a person's own `tsc -b` does.

Each edit is applied to both trees, then `habitat verify --json --rung compile.project`
through the host (started before the first edit, nothing verified) and `tsc -b
tsconfig.json`, in alternating order; then both are put back. An edit has an expected
verdict: `red` with findings in the named files (a referenced project's API change must be
red in its dependents), or `green`. `tsc -b`'s verdict: its errors that are not at HEAD
(file, code, message). The habitat's note says how many files its warm checker re-checked:
a leaf's edit must not re-check the projects it does not reach.

    .venv/bin/python bench/ladder/node_references.py --root /tmp/lsp/a --peer /tmp/lsp/b
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_node import Bench, _git, _run

from _report import load_now, print_table, run_meta, started, write_json

DATA = Path(__file__).resolve().parents[2] / "docs" / "bench-data"
_TS = re.compile(r"^(\S[^(]*)\(\d+,\d+\): error (TS\d+): (.*)$", re.M)
# (what, file, old text, new text, expected verdict, files a red must name)
EDITS: list[tuple[str, str, str, str, str, tuple[str, ...]]] = [
    (
        "an overload removed from a referenced project's API (types: Range.create with 4 "
        "numbers); its dependents' calls break",
        "types/src/main.ts",
        "\texport function create(startLine: uinteger, startCharacter: uinteger, endLine: "
        "uinteger, endCharacter: uinteger): Range;\n",
        "",
        "red",
        ("types/src/test/", "client-node-tests/"),
    ),
    (
        "a comment in the most referenced project (jsonrpc's messages)",
        "jsonrpc/src/common/messages.ts",
        "export interface Message {\n",
        "// habitat: a comment\nexport interface Message {\n",
        "green",
        (),
    ),
    (
        "a property's type changed in a referenced project (jsonrpc: method becomes a number)",
        "jsonrpc/src/common/messages.ts",
        "\tpublic readonly method: string;\n",
        "\tpublic readonly method: number;\n",
        "red",
        ("jsonrpc/", "client/"),
    ),
    (
        "a type error in a leaf project nothing references (tsconfig-gen)",
        "tsconfig-gen/src/main.ts",
        "export * from './types';\n",
        "export * from './types';\nexport const habitatLeaf: number = 'x';\n",
        "red",
        ("tsconfig-gen/",),
    ),
    (
        "an export added to a dependent, every type kept (server)",
        "server/src/common/server.ts",
        "\nimport {\n",
        "\nexport const habitatNote: string = 'y';\nimport {\n",
        "green",
        (),
    ),
]


def _errors(text: str) -> set[tuple[str, str, str]]:
    return {(m[1].strip(), m[2], m[3].strip()) for m in _TS.finditer(text)}


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the prepared tree the habitat checks")
    parser.add_argument("--peer", required=True, help="a copy of it, where tsc -b builds")
    parser.add_argument("--home", default="/tmp/habitat-references-bench")
    parser.add_argument("--out", default=str(DATA / "node_references-vscode-lsp.json"))
    args = parser.parse_args()
    start = started()
    root, peer = Path(args.root), Path(args.peer)
    tsc_b = [str(peer / "node_modules" / ".bin" / "tsc"), "-b", "tsconfig.json"]
    wall, code, text = _run(tsc_b, peer)
    at_head = _errors(text)
    print(f"tsc -b at HEAD: {wall:.1f} s, exit {code}, {len(at_head)} errors", file=sys.stderr)
    bench = Bench(root, Path(args.home) / f"home-{int(time.time())}", oneshot=False)
    bench.host("start")
    rows: list[dict[str, Any]] = []
    try:
        for turn, (what, rel, old, new, expected, names) in enumerate(EDITS):
            for tree in (root, peer):
                _edit(tree, rel, old, new)
            row: dict[str, Any] = {"edit": what, "file": rel, "expected": expected}
            try:
                for side in ("habitat", "tsc -b") if turn % 2 == 0 else ("tsc -b", "habitat"):
                    if side == "habitat":
                        wall, result = bench.verify("--rung", "compile.project")
                        rung: dict[str, Any] = next(
                            (r for r in result.get("rungs", []) if r["rung"] == "compile.project"),
                            {},
                        )
                        new_files = sorted(
                            {
                                str(d.get("file"))
                                for d in rung.get("diagnostics", [])
                                if not d.get("preexisting") and d.get("severity") == "error"
                            }
                        )
                        notes = " ".join(rung.get("notes", []))
                        checked = re.search(r"(\d+) of (\d+) files re-checked", notes)
                        row["habitat"] = {
                            "wall_s": round(wall, 2),
                            "state": rung.get("state", result.get("state")),
                            "new_files": new_files,
                            "rechecked": [int(checked[1]), int(checked[2])] if checked else None,
                            "warm": "the warm checker (pid" in notes,
                        }
                    else:
                        wall, code, text = _run(tsc_b, peer)
                        found = _errors(text) - at_head
                        row["tsc -b"] = {
                            "wall_s": round(wall, 2),
                            "exit": code,
                            "state": "red" if found else "green",
                            "new_files": sorted({f for f, _, _ in found}),
                        }
            finally:
                for tree in (root, peer):
                    _git(tree, "checkout", "-q", "--", rel)
            ours = row["habitat"]
            named = all(any(f.startswith(n) for f in ours["new_files"]) for n in names)
            row["right"] = ours["state"] == expected and (expected == "green" or named)
            row["peer_right"] = row["tsc -b"]["state"] == expected
            row["load"] = load_now()
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    finally:
        bench.host("stop")
    table = [
        [
            r["edit"][:70],
            r["expected"],
            f"{r['habitat']['state']} ({', '.join(r['habitat']['new_files'][:3]) or '—'})",
            f"{r['tsc -b']['state']} ({', '.join(r['tsc -b']['new_files'][:3]) or '—'})",
            "yes" if r["right"] else "NO",
            "/".join(map(str, r["habitat"]["rechecked"] or ["—"])),
            f"{r['habitat']['wall_s']} s",
            f"{r['tsc -b']['wall_s']} s",
            f"{r['load'][0]:.1f}",
        ]
        for r in rows
    ]
    print_table(
        "compile.project through the host vs tsc -b, vscode-languageserver-node (references)",
        [
            "edit",
            "expected",
            "habitat",
            "tsc -b",
            "right",
            "re-checked",
            "habitat",
            "tsc -b",
            "load",
        ],
        table,
    )
    payload = {"project": "vscode-languageserver-node", "head_errors": len(at_head), "rows": rows}
    print(f"wrote {write_json('node_references', {**payload, **run_meta(start)}, Path(args.out))}")


if __name__ == "__main__":
    main()
