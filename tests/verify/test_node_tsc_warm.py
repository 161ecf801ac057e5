"""The warm tsc (verify/toolchains/node/tsc_warm.py + tsc_warm.cjs) against a real tsc: the
same output byte for byte through a sequence of edits (type errors across files, a syntax
error, a module that appears and goes away, a tsconfig change, back to HEAD). Its rung and
lifecycle are in test_node_tsc_compile.py, project references in test_node_tsc_references.py
(three modules, so `--dist loadfile` spreads the cold tscs over three workers)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.toolchains.node.detect import load_project
from agent_habitat.verify.toolchains.node.tsc_warm import warm_tsc
from agent_habitat.workspace import Workspace
from git_tree import git, write
from node_tsc import SHAPE as _SHAPE
from node_tsc import TSCONFIG as _TSCONFIG
from node_tsc import TSCONFIG_OPTIONS
from node_tsc import USE as _USE
from node_tsc import project as _project
from node_warm import rung_ctx

from .node_typescript import typescript_only

pytestmark = pytest.mark.anyio

_DECLARATIONS = {**TSCONFIG_OPTIONS, "declaration": True, "isolatedDeclarations": True}
_DEFAULTS = {"strict": False, "lib": ["es5"]}


def _cold(root: Path) -> str:
    tsc = root / "node_modules" / ".bin" / "tsc"
    argv = [str(tsc), "--noEmit", "--pretty", "false", "-p", "tsconfig.json"]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    return proc.stdout


async def _warm(root: Path) -> str:
    ctx = rung_ctx(root, server=True)
    project = load_project(root)
    ws = project.workspaces[0]
    tsc = project.bin(ws, "tsc")
    assert tsc is not None
    notes: list[str] = []
    outcome = await warm_tsc(ctx, project, ws, tsc, notes)
    assert outcome is not None, notes
    return outcome.text


@pytest.mark.timeout(900)  # 12 cold tscs: 10-40 s of wall each at load 30 on the 2 cores
async def test_the_warm_checker_says_what_tsc_says_byte_for_byte_through_edits(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    # Its own @types package, with an error only a check of declaration files finds.
    typescript_only(root, {"tiny": "declare const tiny: number = 1;\n"})
    edits: list[tuple[str, str | None]] = [
        # A change to an exported type: the error lands in the file that imports it.
        ("src/shape.ts", _SHAPE.replace("size: number", "size: string")),
        # A message chain over several lines, and an error in the touched file itself.
        ("src/area.ts", _USE + "export const bad: { a: { b: number } } = { a: { b: 'x' } };\n"),
        ("src/area.ts", _USE + "export function broken( {\n"),  # a syntax error
        ("src/area.ts", _USE.replace("./shape", "./missing")),  # TS2307
        ("src/missing.ts", _SHAPE),  # the module appears: resolved again
        ("src/missing.ts", None),  # and goes away
        # Declaration diagnostics (below) are asked only when nothing else is wrong, so
        # old.ts is fixed first: before tsc's defaults, the costliest tsconfig to check.
        ("src/old.ts", "export const n: number = 1;\n"),
        # tsc's defaults: every @types package read and every declaration file checked, the
        # library's too (TS1039). The library is ES5's alone: the default one brings the
        # DOM's, and a cold tsc of it took 2.4 CPU s here, 0.6 with ES5's, in tsc and the
        # warm checker alike (the warm checker has no path of its own for the library).
        ("tsconfig.json", json.dumps({**_TSCONFIG, "compilerOptions": _DEFAULTS})),
        # Declaration diagnostics (tsc reports them under --noEmit with declaration on),
        # kept per file between checks: one file's change, then another's.
        ("tsconfig.json", json.dumps({**_TSCONFIG, "compilerOptions": _DECLARATIONS})),
        ("src/area.ts", _USE.replace("): number {", ") {")),  # TS9007
        ("src/shape.ts", _SHAPE + "export const made = () => 1;\n"),
    ]
    seen = set()
    try:
        head = _cold(root)
        assert await _warm(root) == head
        for rel, text in edits:
            if text is None:
                (root / rel).unlink()
            else:
                write(root, rel, text)
            cold = _cold(root)
            assert await _warm(root) == cold, (rel, text)
            seen.add(cold)
        # Back to HEAD, the tree the first check saw (missing.ts is gone again): tsc said
        # `head` of it, and only old.ts's error is left.
        git(root, "checkout", "-q", "--", ".")
        assert (
            await _warm(root)
            == head
            == "src/old.ts(1,14): error TS2322: "
            + ("Type 'string' is not assignable to type 'number'.\n")
        )
        assert len(seen) >= 5  # the edits gave tsc different things to say
        assert "error TS2307" in "".join(seen)
        assert "error TS9007" in "".join(seen)
        assert "error TS1005" in "".join(seen)
        assert "node_modules/@types/tiny/index.d.ts(1,30): error TS1039" in "".join(seen)
    finally:
        await warm_checker.release(Workspace.for_project(root))
