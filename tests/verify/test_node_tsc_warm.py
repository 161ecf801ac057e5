"""The warm tsc (verify/toolchains/node/tsc_warm.py + tsc_warm.cjs) against a real tsc: the
same output byte for byte through a sequence of edits (type errors across files, a syntax
error, a module that appears and goes away, a tsconfig change, back to HEAD); HEAD's errors
from the same process with HEAD's text laid over; its lifecycle (started by the warm-up, listed,
started again after it died, saying so; stopped with its owner); a one-shot climb runs tsc
cold."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from agent_habitat.proc import ProcessRecord, is_alive
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.toolchains.node.detect import load_project
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.verify.toolchains.node.tsc_warm import warm_tsc
from agent_habitat.workspace import Workspace
from git_tree import git, write
from node_warm import rung_ctx, tiny_project, warm_up_starts

pytestmark = pytest.mark.anyio

_TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "module": "esnext",
        "target": "es2022",
        "moduleResolution": "bundler",
        "skipLibCheck": True,
        # Only the ES library: without these, tsc reads every @types package the linked test
        # tools brought (210 files, 3x the CPU of each cold tsc here). The edit to
        # `{"strict": False}` below drops them, so that path is still held against tsc.
        "types": [],
        "lib": ["es2022"],
    },
    "include": ["src"],
}
_DECLARATIONS = {
    **_TSCONFIG["compilerOptions"],  # type: ignore[dict-item]
    "declaration": True,
    "isolatedDeclarations": True,
}
_SHAPE = "export interface Shape {\n  kind: 'circle' | 'square';\n  size: number;\n}\n"
_USE = (
    "import type { Shape } from './shape';\n"
    "export function area(s: Shape): number {\n"
    "  return s.kind === 'circle' ? Math.PI * s.size ** 2 : s.size * s.size;\n"
    "}\n"
)


def _project(root: Path) -> Path:
    files = {
        "package.json": json.dumps({"name": "tiny", "private": True, "type": "module"}),
        ".gitignore": "node_modules/\n",
        "tsconfig.json": json.dumps(_TSCONFIG),
        "src/shape.ts": _SHAPE,
        "src/area.ts": _USE,
        "src/old.ts": "export const n: number = 'x';\n",
    }
    return tiny_project(root, files)


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


@pytest.mark.timeout(900)  # 13 cold tscs: 10-40 s each at load 30 on the 2 cores
async def test_the_warm_checker_says_what_tsc_says_byte_for_byte_through_edits(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    edits: list[tuple[str, str | None]] = [
        # A change to an exported type: the error lands in the file that imports it.
        ("src/shape.ts", _SHAPE.replace("size: number", "size: string")),
        # A message chain over several lines, and an error in the touched file itself.
        ("src/area.ts", _USE + "export const bad: { a: { b: number } } = { a: { b: 'x' } };\n"),
        ("src/area.ts", _USE + "export function broken( {\n"),  # a syntax error
        ("src/area.ts", _USE.replace("./shape", "./missing")),  # TS2307
        ("src/missing.ts", _SHAPE),  # the module appears: resolved again
        ("src/missing.ts", None),  # and goes away
        ("tsconfig.json", json.dumps({**_TSCONFIG, "compilerOptions": {"strict": False}})),
        # Declaration diagnostics (tsc reports them under --noEmit with declaration on),
        # kept per file between checks: one file's change, then another's (tsc asks them
        # only when nothing else is wrong, so old.ts is fixed first).
        ("src/old.ts", "export const n: number = 1;\n"),
        ("tsconfig.json", json.dumps({**_TSCONFIG, "compilerOptions": _DECLARATIONS})),
        ("src/area.ts", _USE.replace("): number {", ") {")),  # TS9007
        ("src/shape.ts", _SHAPE + "export const made = () => 1;\n"),
    ]
    seen = set()
    try:
        assert await _warm(root) == _cold(root)
        for rel, text in edits:
            if text is None:
                (root / rel).unlink()
            else:
                write(root, rel, text)
            cold = _cold(root)
            assert await _warm(root) == cold, (rel, text)
            seen.add(cold)
        git(root, "checkout", "-q", "--", ".")  # back to HEAD: only old.ts's error is left
        assert (
            await _warm(root)
            == _cold(root)
            == "src/old.ts(1,14): error TS2322: "
            + ("Type 'string' is not assignable to type 'number'.\n")
        )
        assert len(seen) >= 5  # the edits gave tsc different things to say
        assert "error TS2307" in "".join(seen)
        assert "error TS9007" in "".join(seen)
        assert "error TS1005" in "".join(seen)
    finally:
        await warm_checker.release(Workspace.for_project(root))


async def _compile(root: Path, *, server: bool) -> RungResult:
    return await RUNNERS["compile.project"](rung_ctx(root, server=server))


@pytest.mark.timeout(600)
async def test_compile_project_warm_in_a_server_cold_one_shot_head_from_the_overlay(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    workspace = Workspace.for_project(root)
    write(root, "src/area.ts", _USE.replace("s.size * s.size", "s.size * s.kind"))
    try:
        cold = await _compile(root, server=False)
        assert cold.state == "red"
        assert "--incremental" in cold.command
        assert any("one-shot verify keeps no warm checker" in n for n in cold.notes)
        assert warm_checker.live(workspace) == []

        warm = await _compile(root, server=True)
        assert warm.state == "red", warm
        assert any("the warm checker" in n for n in warm.notes), warm.notes
        assert [(d.file, d.line, d.code, d.preexisting) for d in warm.diagnostics] == [
            (d.file, d.line, d.code, d.preexisting) for d in cold.diagnostics
        ]
        assert [(d.file, d.preexisting) for d in warm.diagnostics] == [
            ("src/area.ts", False),
            ("src/old.ts", True),
        ]
        [listed] = warm_checker.live(workspace)
        assert (listed["tool"], listed["kind"], listed["owner"]) == ("tsc", "checker", os.getpid())
        assert "warm: tsc checker pid" in warm_checker.describe(workspace)

        # A new HEAD whose old.ts is fixed: HEAD's errors come from the warm checker with
        # HEAD's text of the changed files laid over the disk's.
        write(root, "src/old.ts", "export const n: number = 1;\n")
        git(root, "commit", "-qm", "fix old", "--", "src/old.ts")
        write(root, "src/old.ts", "export const n: number = 'y';\n")
        again = await _compile(root, server=True)
        assert [(d.file, d.preexisting) for d in again.diagnostics] == [
            ("src/area.ts", False),
            ("src/old.ts", False),
        ]

        # The checker dies: the next verify starts another and says so.
        os.kill(listed["pid"], signal.SIGKILL)
        with anyio.fail_after(60):  # dead, as the next verify will see it (SIGKILL is async)
            while is_alive(ProcessRecord(listed["pid"], 0.0)):
                await anyio.sleep(0.05)
        # The kill lands when the kernel next runs the checker, which on a loaded machine can
        # be after the verify below looked: wait (bounded) until it is gone, so that verify
        # meets a checker that had exited, not one dying in the middle of its check.
        with anyio.fail_after(30):
            while is_alive(ProcessRecord(listed["pid"], 0.0)):
                await anyio.sleep(0.02)
        back = await _compile(root, server=True)
        assert back.state == "red"
        assert any("had exited; started again" in n for n in back.notes), back.notes
        [relisted] = warm_checker.live(workspace)
        assert relisted["pid"] != listed["pid"]
    finally:
        assert await warm_checker.release(workspace)
    assert warm_checker.live(workspace) == []


@pytest.mark.timeout(600)
async def test_the_warm_up_starts_the_checker_and_it_stops_with_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await warm_up_starts(_project(tmp_path), monkeypatch, "tsc", "tsc checker pid")


_COMPOSITE = {**_TSCONFIG["compilerOptions"], "composite": True, "outDir": "dist"}  # type: ignore[dict-item]
_CORE = "export function area(size: number): number {\n  return size * size;\n}\n"
_APP = 'import { area } from "../../core/src/index";\nexport const a: number = area(2);\n'


def _monorepo(root: Path, *, workspaces: bool = False) -> Path:
    package: dict[str, object] = {"name": "mono", "private": True, "type": "module"}
    files: dict[str, str] = {}
    if workspaces:  # npm workspaces: a change in core affects app, which depends on it
        package["workspaces"] = ["packages/*"]
        files["packages/core/package.json"] = json.dumps({"name": "@m/core", "private": True})
        files["packages/app/package.json"] = json.dumps(
            {"name": "@m/app", "private": True, "dependencies": {"@m/core": "*"}}
        )
    files |= {
        "package.json": json.dumps(package),
        ".gitignore": "node_modules/\ndist/\n*.tsbuildinfo\n",
        "tsconfig.json": json.dumps(
            {"files": [], "references": [{"path": "./packages/core"}, {"path": "./packages/app"}]}
        ),
        "packages/core/tsconfig.json": json.dumps(
            {"compilerOptions": _COMPOSITE, "include": ["src"]}
        ),
        "packages/app/tsconfig.json": json.dumps(
            {"compilerOptions": _COMPOSITE, "include": ["src"], "references": [{"path": "../core"}]}
        ),
        "packages/core/src/index.ts": _CORE,
        "packages/core/src/old.ts": "export const n: number = 'x';\n",
        "packages/app/src/main.ts": _APP,
    }
    return tiny_project(root, files)


def _build(root: Path, copy: Path) -> str:
    """`tsc -b` in a copy of the tree (it writes each project's outputs)."""
    subprocess.run(["cp", "-r", f"{root}/.", str(copy)], check=True)
    tsc = copy / "node_modules" / ".bin" / "tsc"
    argv = [str(tsc), "-b", "--pretty", "false"]
    proc = subprocess.run(argv, cwd=copy, capture_output=True, text=True, check=False)
    return proc.stdout


@pytest.mark.timeout(900)
async def test_project_references_checked_per_project_as_tsc_b_red_only_for_the_change(
    tmp_path: Path,
) -> None:
    root = _monorepo(tmp_path / "mono")
    workspace = Workspace.for_project(root)
    # core's return type changes: the error is in app, which imports it through a reference.
    write(
        root,
        "packages/core/src/index.ts",
        "export function area(size: number): string {\n  return String(size);\n}\n",
    )
    try:
        cold = await _compile(root, server=False)
        assert "--once" in cold.command, cold.command
        warm = await _compile(root, server=True)
        assert any("over 2 projects (references)" in n for n in warm.notes), warm.notes
        for result in (cold, warm):
            assert result.state == "red", result
            assert [(d.file, d.line, d.code, d.preexisting) for d in result.diagnostics] == [
                ("packages/app/src/main.ts", 2, "TS2322", False),
                ("packages/core/src/old.ts", 1, "TS2322", True),
            ]
        assert cold.diagnostics == warm.diagnostics
        # What tsc -b says of the same tree, in its order.
        built = _build(root, tmp_path / "built")
        assert built.splitlines() == [
            "packages/core/src/old.ts(1,14): error TS2322: "
            "Type 'string' is not assignable to type 'number'.",
            "packages/app/src/main.ts(2,14): error TS2322: "
            "Type 'string' is not assignable to type 'number'.",
        ]
        # Fixed in app: only HEAD's error is left, so the rung is green.
        write(root, "packages/app/src/main.ts", _APP.replace("a: number", "a: string"))
        fixed = await _compile(root, server=True)
        assert fixed.state == "green", fixed
        assert (fixed.new_findings, fixed.preexisting_findings) == (0, 1)
    finally:
        await warm_checker.release(workspace)


@pytest.mark.timeout(900)
async def test_two_workspaces_that_reach_the_same_project_report_its_findings_once(
    tmp_path: Path,
) -> None:
    root = _monorepo(tmp_path / "mono", workspaces=True)
    write(
        root,
        "packages/core/src/index.ts",
        "export function area(size: number): string {\n  return String(size);\n}\n",
    )
    result = await _compile(root, server=False)
    # core's own check and app's (which reads core's sources) both see core's old.ts.
    assert result.state == "red", result
    assert [(d.file, d.code, d.preexisting) for d in result.diagnostics] == [
        ("packages/app/src/main.ts", "TS2322", False),
        ("packages/core/src/old.ts", "TS2322", True),
    ], [(d.file, d.line, d.code, d.preexisting, result.notes) for d in result.diagnostics]
    assert (result.new_findings, result.preexisting_findings) == (1, 1)


_BY_NAME = 'import { area } from "@m/core";\nexport const a: number = area(2);\n'


def _solution(root: Path) -> Path:
    """A solution whose app has no references of its own and imports core by package name,
    through a `node_modules` link to core's folder, whose types are core's built outputs
    (vscode-languageserver-node's shape: the solution's order builds core first)."""
    declared = {**_TSCONFIG["compilerOptions"], "declaration": True, "outDir": "dist"}  # type: ignore[dict-item]
    files = {
        "package.json": json.dumps({"name": "sol", "private": True, "type": "module"}),
        ".gitignore": "node_modules/\ndist/\n*.tsbuildinfo\n",
        "tsconfig.json": json.dumps(
            {"files": [], "references": [{"path": "./packages/core"}, {"path": "./packages/app"}]}
        ),
        "packages/core/package.json": json.dumps({"name": "@m/core", "types": "dist/index.d.ts"}),
        "packages/core/tsconfig.json": json.dumps(
            {"compilerOptions": declared, "include": ["src"]}
        ),
        "packages/app/tsconfig.json": json.dumps({"compilerOptions": declared, "include": ["src"]}),
        "packages/core/src/index.ts": _CORE,
        "packages/app/src/main.ts": _BY_NAME,
    }
    tiny_project(root, files)
    link = root / "packages/app/node_modules/@m/core"
    link.parent.mkdir(parents=True)
    link.symlink_to("../../../core", target_is_directory=True)
    return root


@pytest.mark.timeout(900)
async def test_a_project_that_imports_an_earlier_one_by_package_name_reads_its_sources(
    tmp_path: Path,
) -> None:
    root = _solution(tmp_path / "sol")
    workspace = Workspace.for_project(root)
    try:
        # Nothing is built: app still finds core (its sources), as tsc -b finds it (its
        # build of core, first in the solution's order).
        write(root, "packages/app/src/main.ts", "// app\n" + _BY_NAME)
        clean = await _compile(root, server=False)
        assert clean.state == "green", clean
        git(root, "checkout", "-q", "--", "packages/app/src/main.ts")
        write(
            root,
            "packages/core/src/index.ts",
            "export function area(size: number): string {\n  return String(size);\n}\n",
        )
        cold = await _compile(root, server=False)
        warm = await _compile(root, server=True)
        for result in (cold, warm):
            assert result.state == "red", result
            assert [(d.file, d.line, d.code, d.preexisting) for d in result.diagnostics] == [
                ("packages/app/src/main.ts", 2, "TS2322", False),
            ]
        assert _build(root, tmp_path / "built").splitlines() == [
            "packages/app/src/main.ts(2,14): error TS2322: "
            "Type 'string' is not assignable to type 'number'.",
        ]
    finally:
        await warm_checker.release(workspace)
