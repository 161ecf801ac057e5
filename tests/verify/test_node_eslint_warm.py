"""The warm eslint (verify/toolchains/node/eslint_warm.py + eslint_warm.cjs) against the
real eslint CLI: the same findings through a sequence of edits (a new finding, a syntax
error, a fix), after an edit of a module the configuration imports (the process answers
stale and is started again) and of the configuration itself (a new key: started again);
HEAD's findings from the same process; its lifecycle (listed, started again after it died,
saying so; stopped with its owner; the warm-up starts it); a one-shot climb runs the CLI
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
from agent_habitat.verify.models import Diagnostic, RungResult
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.toolchains.node.detect import load_project
from agent_habitat.verify.toolchains.node.eslint_warm import lint_warm
from agent_habitat.verify.toolchains.node.parsers import parse_eslint
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.workspace import Workspace
from git_tree import git, write
from node_warm import rung_ctx, tiny_project, warm_up_starts

pytestmark = pytest.mark.anyio

# The configuration imports a local module: an edit there must reach the next lint.
_CONFIG = (
    'import { rules } from "./lint-rules.js";\nexport default [{ files: ["**/*.js"], rules }];\n'
)
_RULES = 'export const rules = { "no-unused-vars": "error", eqeqeq: "error" };\n'
_A = "export function same(a, b) {\n  return a == b;\n}\n"


def _project(root: Path) -> Path:
    files = {
        "package.json": json.dumps({"name": "tiny", "private": True, "type": "module"}),
        ".gitignore": "node_modules/\n",
        "eslint.config.js": _CONFIG,
        "lint-rules.js": _RULES,
        "src/a.js": _A,
        "src/b.js": "export const b = 1;\n",
    }
    return tiny_project(root, files)


def _key(found: list[Diagnostic]) -> list[tuple[object, ...]]:
    return [(d.file, d.line, d.col, d.code, d.severity, d.message) for d in found]


def _cold(root: Path, files: list[str]) -> list[tuple[object, ...]]:
    eslint = root / "node_modules" / ".bin" / "eslint"
    argv = [str(eslint), "--format", "json", *(str(root / f) for f in files)]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return _key(parse_eslint(proc.stdout, root))


async def _warm(root: Path, files: list[str]) -> tuple[list[tuple[object, ...]], list[str]]:
    ctx = rung_ctx(root, server=True)
    project = load_project(root)
    eslint = project.bin(project.workspaces[0], "eslint")
    assert eslint is not None
    notes: list[str] = []
    params = {"files": [str(root / f) for f in files]}
    answer = await lint_warm(ctx, project, root, eslint, params, notes)
    assert answer is not None, notes
    return _key(parse_eslint(str(answer["report"]), root)), notes


@pytest.mark.timeout(600)  # a cold eslint per edit, on a loaded 2-core machine
async def test_the_warm_linter_finds_what_the_cli_finds_through_edits(tmp_path: Path) -> None:
    root = _project(tmp_path)
    files = ["src/a.js", "src/b.js"]
    edits = [
        ("src/a.js", "export function same(a, b) {\n  const c = 1;\n  return a == b;\n}\n"),
        ("src/b.js", "export const b = (;\n"),  # a syntax error
        ("src/b.js", "export const b = 2;\n"),
        # The configuration's own module: the process must not keep the one it loaded.
        ("lint-rules.js", _RULES.replace('eqeqeq: "error"', 'eqeqeq: "off"')),
        (
            "eslint.config.js",
            _CONFIG.replace("], rules }", '], rules: { ...rules, "no-var": 2 } }'),
        ),
        ("src/b.js", "var b = 2;\nexport { b };\n"),
    ]
    said: list[str] = []
    try:
        first, notes = await _warm(root, files)
        assert first == _cold(root, files)
        pid = warm_checker.live(Workspace.for_project(root))[0]["pid"]
        for rel, text in edits:
            write(root, rel, text)
            warm, notes = await _warm(root, files)
            assert warm == _cold(root, files), (rel, notes)
            said += notes
        assert any("lint-rules.js, which the configuration loaded, changed" in n for n in said)
        assert any("the configuration or the checker changed" in n for n in said), said
        [listed] = warm_checker.live(Workspace.for_project(root))
        assert listed["pid"] != pid
        assert (listed["tool"], listed["kind"]) == ("eslint", "linter")
        codes = {c[3] for c in warm}
        assert codes == {"no-unused-vars", "no-var"}, warm
        # HEAD's content under the file's path (lintText), as `--stdin --stdin-filename`.
        text = "var z = 1 == 2;\n"
        ctx = rung_ctx(root, server=True)
        project = load_project(root)
        eslint = project.bin(project.workspaces[0], "eslint")
        assert eslint is not None
        items = [{"path": str(root / "src/b.js"), "text": text}]
        answer = await lint_warm(ctx, project, root, eslint, {"texts": items}, notes)
        assert answer is not None, notes
        argv = [str(eslint), "--format", "json", "--stdin", "--stdin-filename", "src/b.js"]
        proc = subprocess.run(argv, cwd=root, input=text, capture_output=True, text=True)
        from_stdin = _key(parse_eslint(proc.stdout, root))
        assert _key(parse_eslint(str(answer["report"]), root)) == from_stdin
        assert {c[3] for c in from_stdin} == {"no-unused-vars", "no-var"}
    finally:
        await warm_checker.release(Workspace.for_project(root))


async def _lint(root: Path, *, server: bool) -> RungResult:
    return await RUNNERS["diagnose.files"](rung_ctx(root, server=server))


@pytest.mark.timeout(600)
async def test_diagnose_files_warm_in_a_server_cold_one_shot_head_from_the_same_process(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    workspace = Workspace.for_project(root)
    write(root, "src/a.js", "export function same(a, b) {\n  const c = 1;\n  return a == b;\n}\n")
    try:
        cold = await _lint(root, server=False)
        assert cold.state == "red", cold
        assert "--format" in cold.command
        assert any("one-shot verify keeps no warm linter" in n for n in cold.notes)
        assert warm_checker.live(workspace) == []

        warm = await _lint(root, server=True)
        assert warm.state == "red", warm
        assert any("the warm linter" in n for n in warm.notes), warm.notes
        assert [(d.file, d.line, d.code, d.preexisting) for d in warm.diagnostics] == [
            (d.file, d.line, d.code, d.preexisting) for d in cold.diagnostics
        ]
        assert [(d.code, d.line, d.preexisting) for d in warm.diagnostics] == [
            ("no-unused-vars", 2, False),
            ("eqeqeq", 3, True),
        ]
        [listed] = warm_checker.live(workspace)
        assert (listed["tool"], listed["owner"]) == ("eslint", os.getpid())
        assert "warm: eslint linter pid" in warm_checker.describe(workspace)

        # A file the change adds: a new process (a resolver may remember what was there).
        write(root, "src/c.js", "export const c = 1 == 2;\n")
        added = await _lint(root, server=True)
        assert sorted((d.file, d.preexisting) for d in added.diagnostics if d.code == "eqeqeq") == [
            ("src/a.js", True),
            ("src/c.js", False),
        ]
        assert any("the configuration or the checker changed" in n for n in added.notes)

        # The linter dies: the next verify starts another and says so.
        [listed] = warm_checker.live(workspace)
        os.kill(listed["pid"], signal.SIGKILL)
        with anyio.fail_after(60):  # dead, as the next verify will see it (SIGKILL is async)
            while is_alive(ProcessRecord(listed["pid"], 0.0)):
                await anyio.sleep(0.05)
        back = await _lint(root, server=True)
        assert back.state == "red"
        assert any("had exited; started again" in n for n in back.notes), back.notes
        [relisted] = warm_checker.live(workspace)
        assert relisted["pid"] != listed["pid"]

        # Back to HEAD's content: the finding there is not the change's.
        git(root, "checkout", "-q", "--", "src/a.js")
        (root / "src/c.js").unlink()
        write(root, "src/a.js", "// moved\n" + _A)
        moved = await _lint(root, server=True)
        assert moved.state == "green", moved
        assert (moved.new_findings, moved.preexisting_findings) == (0, 1)
    finally:
        assert await warm_checker.release(workspace)
    assert warm_checker.live(workspace) == []


@pytest.mark.timeout(600)
async def test_the_warm_up_starts_the_linter_and_it_stops_with_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await warm_up_starts(_project(tmp_path), monkeypatch, "eslint", "eslint linter pid")
