"""A Node project's type check and tests start beside its lint (verify/ahead.py), and the
climb still reports a ladder: real eslint, tsc and vitest on a tiny project (scule 1.3.0's
first verify after a host start was their sum, 58 s at load 26, where `npx vitest run`
took 12 s)."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.verify import LadderRequest, LadderResult, run_ladder
from git_tree import commit_tree, write
from node_tools import node_modules

pytestmark = pytest.mark.anyio

_ADD = "export function add(a, b) {\n  return a + b;\n}\n"
_TSCONFIG = {
    # JavaScript checked by tsc, no @types read: the check costs what these files cost.
    "compilerOptions": {
        "allowJs": True,
        "checkJs": True,
        "noEmit": True,
        "skipLibCheck": True,
        "types": [],
        "module": "esnext",
        "target": "es2022",
        "moduleResolution": "bundler",
        "lib": ["es5"],  # not the target's default, es2022 with the DOM's
    },
    "include": ["src"],
}


def _project(root: Path) -> Path:
    package = {
        "name": "tiny",
        "private": True,
        "type": "module",
        "devDependencies": {"eslint": "9", "typescript": "5", "vitest": "3"},
    }
    commit_tree(
        root,
        {
            "package.json": json.dumps(package),
            ".gitignore": "node_modules/\n",
            "eslint.config.js": 'export default [{ rules: { "no-unused-vars": "error" } }];\n',
            "tsconfig.json": json.dumps(_TSCONFIG),
            "src/add.js": _ADD,
            "test/add.test.js": (
                "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\n"
                "test('adds', () => { expect(add(1, 2)).toBe(3); });\n"
            ),
        },
    )
    (root / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    return root


async def _climb(root: Path, events: list[Event]) -> LadderResult:
    bus = InMemoryEventBus(str(root))
    bus.subscribe(events.append)
    return await run_ladder(root, LadderRequest(policy="standard"), bus=bus)


async def test_tsc_and_vitest_started_beside_eslint_report_as_the_climb_reaches_them(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    write(root, "src/add.js", _ADD.replace("a + b", "a - b"))
    events: list[Event] = []
    result = await _climb(root, events)
    assert [(r.rung, r.state, r.tool) for r in result.rungs] == [
        ("diagnose.files", "green", "eslint"),
        ("compile.project", "green", "tsc"),
        ("test.scoped", "red", "vitest"),
    ], result
    for later in result.rungs[1:]:
        assert any(n.startswith("started beside diagnose.files, ") for n in later.notes), later
    assert [(d.file, d.code) for d in result.rungs[2].diagnostics] == [
        ("test/add.test.js", "failed")
    ]
    # Events in the climb's order: each rung starts once the one before it is done.
    kinds = [(e.kind.rsplit(".", 1)[-1], e.data["rung"]) for e in events if "rung" in e.data]
    assert kinds == [
        ("started", "diagnose.files"),
        ("completed", "diagnose.files"),
        ("started", "compile.project"),
        ("completed", "compile.project"),
        ("started", "test.scoped"),
        ("failed", "test.scoped"),
    ]
    # The rungs' durations are the climb's time in each: they add up within the wall.
    assert sum(r.climb_s for r in result.rungs) <= result.duration_s


async def test_a_red_lint_leaves_the_check_and_tests_started_beside_it_not_reached(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    write(root, "src/add.js", _ADD.replace("a + b", "a - b") + "const unused = 1;\n")
    events: list[Event] = []
    result = await _climb(root, events)
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "red"),
        ("compile.project", "skipped"),
        ("test.scoped", "skipped"),
    ], result
    for later in result.rungs[1:]:
        assert later.reason == "not reached: diagnose.files is red"
    assert result.state == "red"
    assert result.selection is None
    assert not [e for e in events if e.data.get("rung") in ("compile.project", "test.scoped")]
    # tsc's and vitest's processes are gone with the climb (the drop waits for their kill).
    left = [p for p in psutil.Process().children(recursive=True) if _tsc_or_vitest(p)]
    assert not left


def _tsc_or_vitest(process: psutil.Process) -> bool:
    try:
        return any("vitest" in part or "tsc" in part for part in process.cmdline())
    except psutil.Error:  # gone meanwhile
        return False
