"""The warm tsc over project references, as `tsc -b` checks them: each project with its own
options, red only for the change; a solution root is no program (an @types package's own
error is not tsc -b's); two workspaces that reach the same project report its findings once;
a project that imports an earlier one by package name reads its sources."""

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
from node_tsc import TSCONFIG_OPTIONS
from node_tsc import compile_rung as _compile
from node_warm import rung_ctx, tiny_project

from .node_typescript import typescript_only

pytestmark = pytest.mark.anyio

_COMPOSITE = {**TSCONFIG_OPTIONS, "composite": True, "outDir": "dist"}
_CORE = "export function area(size: number): number {\n  return size * size;\n}\n"
_APP = 'import { area } from "../../core/src/index";\nexport const a: number = area(2);\n'


def _monorepo(root: Path, *, workspaces: bool = False, types: dict[str, str] | None = None) -> Path:
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
    tiny_project(root, files)
    # The solution's own tsconfig has tsc's defaults: every @types package would be read.
    typescript_only(root, types)
    return root


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
async def test_a_solution_root_is_not_a_program_its_types_are_not_checked_as_tsc_b(
    tmp_path: Path,
) -> None:
    # `"files": []` with references: tsc -b builds nothing for the root, so an @types
    # package's own error (TS1039), which a program of the root's defaults would check, is
    # not tsc -b's; the projects it references read no @types (`types: []`).
    root = _monorepo(tmp_path / "mono", types={"broken": "declare const broken: number = 1;\n"})
    workspace = Workspace.for_project(root)
    write(root, "packages/app/src/main.ts", _APP + "export const b = 1;\n")  # no new error
    built = _build(root, tmp_path / "built")
    assert built == (
        "packages/core/src/old.ts(1,14): error TS2322: "
        "Type 'string' is not assignable to type 'number'.\n"
    )
    try:
        ctx = rung_ctx(root, server=True)
        project = load_project(root)
        [ws] = project.workspaces
        tsc = project.bin(ws, "tsc")
        assert tsc is not None
        notes: list[str] = []
        outcome = await warm_tsc(ctx, project, ws, tsc, notes)
        assert outcome is not None, notes
        assert outcome.text == built  # byte for byte
        cold = await _compile(root, server=False)
        warm = await _compile(root, server=True)
        for result in (cold, warm):
            assert result.state == "green", result
            assert [(d.file, d.line, d.code, d.preexisting) for d in result.diagnostics] == [
                ("packages/core/src/old.ts", 1, "TS2322", True),
            ]
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
    declared = {**TSCONFIG_OPTIONS, "declaration": True, "outDir": "dist"}
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
    typescript_only(root)  # as in _monorepo
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
        write(root, "packages/app/src/main.ts", _BY_NAME + "export const b = 1;\n")
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
