"""A workspace's whole `test` script (a runner with no affected-test mode, and `test.full`)
compared with HEAD by its failures' names (toolchains/node/script_head.py): a test HEAD fails
too is already failing, not red; a new one is red. Real npm, node and vitest, on tiny
projects made here."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import Layout
from agent_habitat.verify.models import RungName, RungResult
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.snapshot import take_snapshot
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.workspace import Workspace
from git_tree import commit_tree, write
from node_tools import node_modules

pytestmark = pytest.mark.anyio
_IDS = itertools.count(1)
_ADD = "export function add(a, b) {\n  return a + b;\n}\n"

# tape's shape: a `# name` per test, `not ok N description`, a YAML block whose expected and
# actual values move with the change (the broken test's actual is 2 at HEAD, 0 after a - b).
_TAP = """\
import { add } from '../src/add.mjs';
let n = 0;
function check(name, got, want) {
  n += 1;
  console.log(`# ${name}`);
  if (got === want) { console.log(`ok ${n} should be equal`); return; }
  console.log(`not ok ${n} should be equal`);
  console.log(`  ---\\n    expected: ${want}\\n    actual: ${got}\\n  ...`);
  process.exitCode = 1;
}
check('adds', add(1, 2), 3);
check('broken at HEAD', add(1, 1), 3);
"""


def _project(root: Path, files: dict[str, str], **package: object) -> Path:
    data = {"name": "tiny", "private": True, "type": "module", **package}
    commit_tree(root, {"package.json": json.dumps(data), ".gitignore": "node_modules/\n", **files})
    (root / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    return root


async def _climb(root: Path, rung: RungName) -> RungResult:
    snapshot = take_snapshot(root)
    ctx = RungContext(
        root=root,
        workspace=Workspace.for_project(root),
        config=LadderConfig(),
        policy="standard",
        ladder_id=f"v{next(_IDS)}",
        snapshot=snapshot,
        touched=snapshot.touched,
        layout=Layout(root=root, packages={}, test_roots=[], is_python=False),
        env=None,
    )
    return await RUNNERS[rung](ctx)


@pytest.mark.parametrize("rung", ["test.scoped", "test.full"])
async def test_a_tap_test_failing_at_head_is_not_red_a_new_failure_is(
    tmp_path: Path, rung: RungName
) -> None:
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP},
        scripts={"test": "node test/run.mjs"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "a - b"))
    red = await _climb(root, rung)
    assert (red.state, red.tool) == ("red", "npm test"), red
    assert red.baseline is not None
    assert red.baseline.startswith("HEAD "), red.baseline
    assert sorted((d.message, d.preexisting) for d in red.diagnostics) == [
        ("adds: should be equal: expected 3, actual -1", False),
        ("broken at HEAD: should be equal: expected 3, actual 0", True),
    ], red.diagnostics
    assert (red.new_findings, red.preexisting_findings) == (1, 1)
    assert red.reason is not None
    assert red.reason.startswith("1 new failure(s) (+1 test(s) already failing at HEAD)")
    # Only HEAD's failure left: green, saying so; HEAD's run is kept (no second run there).
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    green = await _climb(root, rung)
    assert green.state == "green", green
    assert green.reason is not None
    assert "already failing at HEAD" in green.reason, green.reason
    assert [(d.message, d.preexisting) for d in green.diagnostics] == [
        ("broken at HEAD: should be equal: expected 3, actual 2", True)
    ]
    assert green.baseline is not None
    assert green.baseline.endswith("(cached)"), green.baseline


async def test_a_script_that_fails_on_head_naming_no_test_gives_no_baseline(
    tmp_path: Path,
) -> None:
    # HEAD's pretest fails: its tests never ran there, so nothing is known of them; each
    # failure of the tree's run counts as new, and the notes say why.
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP, "lint.mjs": "process.exit(3);\n"},
        scripts={"test": "node test/run.mjs", "pretest": "node lint.mjs"},
    )
    write(root, "lint.mjs", "process.exit(0);\n")
    red = await _climb(root, "test.full")
    assert red.state == "red", red
    assert [d.preexisting for d in red.diagnostics] == [False]
    assert red.baseline is not None
    assert red.baseline.startswith("none: the test script failed on HEAD naming no test")


async def test_vitest_s_fail_lines_of_a_failing_test_at_head_are_not_red(tmp_path: Path) -> None:
    # test.full reads a vitest script's console: `FAIL  test/add.test.js > name`.
    test = (
        "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\n"
        "test('adds', () => { expect(add(1, 2)).toBe(3); });\n"
        "test('broken at HEAD', () => { expect(add(2, 2)).toBe(5); });\n"
    )
    root = _project(
        tmp_path,
        {"src/add.js": _ADD, "test/add.test.js": test},
        scripts={"test": "vitest run"},
        devDependencies={"vitest": "3"},
    )
    write(root, "src/add.js", _ADD.replace("a + b", "a - b"))
    red = await _climb(root, "test.full")
    assert red.state == "red", red
    assert sorted((d.message, d.preexisting) for d in red.diagnostics) == [
        ("test/add.test.js > adds", False),
        ("test/add.test.js > broken at HEAD", True),
    ], red.diagnostics
    write(root, "src/add.js", _ADD.replace("a + b", "b + a"))
    green = await _climb(root, "test.full")
    assert green.state == "green", green
    assert [(d.message, d.preexisting) for d in green.diagnostics] == [
        ("test/add.test.js > broken at HEAD", True)
    ]
