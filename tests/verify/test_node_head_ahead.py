"""HEAD's run of a red jest run's failed tests, started when their file ended, beside the
rest of the tree's run (verify/toolchains/node/head_ahead.py), and narrowed to those tests
by name (head_tests.py `_only`), with the real jest: the same verdict as HEAD's whole-file
run, the project's own reporters still run, and a later red at the same HEAD asks HEAD
nothing it answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.toolchains.node.head_tests import _only
from agent_habitat.verify.toolchains.node.parsers import jest_outcomes
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.workspace import Workspace
from git_tree import write
from node_warm import rung_ctx, tiny_project

pytestmark = pytest.mark.anyio

_ADD = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n"
# Regular expressions' special characters in a name: HEAD's run must still pick it.
_ADDS = "adds (1+2) [to] $3 | {x}? ^a.b*"
# Each test says where it ran (the tree or HEAD's export) by its folder.
_A = f"""\
const fs = require('fs');
const {{ add }} = require('./add');
const tell = (what) => fs.appendFileSync(process.env.AHEAD_PROBE, `${{what}}:${{__dirname}}\\n`);
test({json.dumps(_ADDS)}, () => {{ tell('adds'); expect(add(1, 2)).toBe(3); }});
test('broken at HEAD', () => {{ tell('broken'); expect(add(2, 2)).toBe(5); }});
test('passes', () => {{ tell('passes'); expect(add(0, 0)).toBe(0); }});
"""
# Runs after a.test.js (the project's sequencer): waits, bounded, until HEAD's run of a's
# failed tests has begun, which only a run started before the tree's run ended can do.
_B = """\
const fs = require('fs');
const { add } = require('./add');
test('waits for HEAD', async () => {
  const ours = __dirname;
  for (let i = 0; i < 3000; i++) {
    const seen = fs.existsSync(process.env.AHEAD_PROBE)
      ? fs.readFileSync(process.env.AHEAD_PROBE, 'utf8') : '';
    if (seen.split('\\n').some((l) => l.startsWith('adds:') && !l.endsWith(ours))) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(typeof add).toBe('function');
}, 400000);
"""
_SEQUENCER = """\
const Sequencer = require('@jest/test-sequencer').default;
module.exports = class ByPath extends Sequencer {
  sort(tests) { return [...tests].sort((a, b) => a.path.localeCompare(b.path)); }
};
"""
_REPORTER = """\
const fs = require('fs');
module.exports = class Own {
  constructor(globalConfig) { this.root = globalConfig.rootDir; }
  onRunComplete() { fs.appendFileSync(process.env.AHEAD_PROBE, `reporter:${this.root}\\n`); }
};
"""


def _project(root: Path) -> Path:
    config = {
        "maxWorkers": 1,
        "testSequencer": "<rootDir>/sequencer.js",
        "reporters": ["default", "<rootDir>/reporter.js"],
    }
    files = {
        "package.json": json.dumps(
            {"name": "tiny", "private": True, "devDependencies": {"jest": "30"}}
        ),
        ".gitignore": "node_modules/\n",
        "jest.config.js": f"module.exports = {json.dumps(config)};\n",
        "sequencer.js": _SEQUENCER,
        "reporter.js": _REPORTER,
        "src/add.js": _ADD,
        "src/a.test.js": _A,
        "src/b.test.js": _B,
    }
    return tiny_project(root, files)


def _lines(probe: Path) -> list[tuple[str, str]]:
    return [
        (what, where)
        for what, _, where in (
            line.partition(":") for line in probe.read_text(encoding="utf-8").splitlines()
        )
    ]


async def _scoped(root: Path) -> RungResult:
    return await RUNNERS["test.scoped"](rung_ctx(root, server=True))


@pytest.mark.timeout(900)  # cold and warm jest runs on a loaded 2-core machine
async def test_head_runs_the_failed_tests_alone_while_the_tree_s_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = tmp_path / "probe.txt"
    monkeypatch.setenv("AHEAD_PROBE", str(probe))
    root = _project(tmp_path / "p")
    tree = str(root / "src")
    workspace = Workspace.for_project(root)
    try:
        write(root, "src/add.js", _ADD.replace("a + b", "a * b"))
        red = await _scoped(root)
        assert (red.state, red.tool) == ("red", "jest"), red
        assert any("the warm runner" in n for n in red.notes), red.notes
        said = " ".join(red.notes)
        assert "HEAD's run of 2 failed test(s) started when their file ended" in said, said
        assert red.baseline is not None
        assert red.baseline.startswith("HEAD "), red.baseline
        assert "cached" not in red.baseline, red.baseline
        assert sorted((d.message.split(": ")[0], d.preexisting) for d in red.diagnostics) == [
            (f"src/a.test.js > {_ADDS}", False),
            ("src/a.test.js > broken at HEAD", True),
        ], red.diagnostics
        seen = _lines(probe)
        at_head = {what for what, where in seen if where != tree and what != "reporter"}
        # HEAD ran the two failed tests (the name with special characters too), not the one
        # that passed in the tree, nor the other file.
        assert at_head == {"adds", "broken"}, seen
        assert ("reporter", str(root)) in seen, seen  # the project's own reporter ran

        # The same failures again at the same HEAD: HEAD is asked nothing.
        before = len(seen)
        again = await _scoped(root)
        assert again.state == "red", again
        assert again.baseline is not None
        assert "(cached)" in again.baseline, again.baseline
        assert not any("HEAD's run of" in n for n in again.notes), again.notes
        assert {where for _, where in _lines(probe)[before:]} <= {tree, str(root)}, seen
    finally:
        await warm_checker.release(workspace)


def test_the_name_pattern_is_the_full_names_escaped_and_a_head_report_keeps_what_ran() -> None:
    keys = ["t/a.test.ts > group adds (1+2)", "t/b.test.ts > x.y > z", "t/a.test.ts > w/v"]
    assert _only(keys) == r"(?:group adds \(1\+2\)|w\/v|x\.y > z)$"
    assert _only(["t/a.test.ts > " + "n" * 9000]) is None  # too long: the whole files run
    report = {
        "testResults": [
            {
                "name": "/r/t/a.test.ts",
                "assertionResults": [
                    {"fullName": "ran", "status": "failed"},
                    {"fullName": "passed", "status": "passed"},
                    {"fullName": "left out", "status": "pending"},
                    {"fullName": "skipped", "status": "skipped"},
                ],
            }
        ]
    }
    text = json.dumps(report)
    ran = jest_outcomes(text, Path("/r"), ran_only=True)
    assert ran == {"t/a.test.ts > ran": 1, "t/a.test.ts > passed": 0}
    every = jest_outcomes(text, Path("/r"))
    assert every is not None
    assert len(every) == 4
