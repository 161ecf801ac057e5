"""The warm jest (verify/toolchains/node/jest_warm.py + jest_warm.cjs) against the real jest
CLI: the same failures through `test.scoped`; the tests run in jest's workers, never in the
warm process, with the environment of the run (not the one the process started with); an
edit of a module the configuration loaded starts the process again and the new
configuration decides; a one-shot climb runs the CLI cold; a run the climb stops stops the
process and its workers."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import anyio
import pytest

from agent_habitat.proc import ProcessRecord, is_alive
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.workspace import Workspace
from git_tree import write
from node_warm import rung_ctx, tiny_project, warm_up_starts

pytestmark = pytest.mark.anyio

_SHARED = "module.exports = { globals: { CONF: 'one' } };\n"
_ADD = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n"
# Where the test ran and what it saw: the worker's pid and the run's variable.
_TEST = """\
const fs = require('fs');
const { add } = require('./add');
test('adds', () => {
  fs.writeFileSync(process.env.JEST_PROBE_OUT, JSON.stringify({
    pid: process.pid, mark: process.env.JEST_PROBE_MARK, conf: globalThis.CONF,
  }));
  expect(add(1, 2)).toBe(3);
});
"""


def _project(root: Path) -> Path:
    files = {
        "package.json": json.dumps(
            {"name": "tiny", "private": True, "devDependencies": {"jest": "30"}}
        ),
        ".gitignore": "node_modules/\n",
        # The configuration loads a local module: an edit there must reach the next run.
        "jest.config.js": "module.exports = { ...require('./jest.shared.js') };\n",
        "jest.shared.js": _SHARED,
        "src/add.js": _ADD,
        "src/add.test.js": _TEST,
    }
    return tiny_project(root, files)


async def _scoped(root: Path, *, server: bool) -> RungResult:
    return await RUNNERS["test.scoped"](rung_ctx(root, server=server))


def _failures(result: RungResult) -> list[tuple[object, ...]]:
    # The message up to its stack, whose jest frames differ in a worker and in band.
    return [(d.file, d.line, d.code, d.message.split("\n    at ")[0]) for d in result.diagnostics]


@pytest.mark.timeout(600)  # cold jest runs on a loaded 2-core machine
async def test_the_warm_jest_fails_what_the_cli_fails_its_tests_in_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = tmp_path / "probe.json"
    root = _project(tmp_path / "p")
    monkeypatch.setenv("JEST_PROBE_OUT", str(probe))
    monkeypatch.setenv("JEST_PROBE_MARK", "first")
    workspace = Workspace.for_project(root)
    try:
        write(root, "src/add.js", _ADD.replace("a + b", "a + b + 1"))
        red = await _scoped(root, server=True)
        assert (red.state, red.tool) == ("red", "jest"), red
        assert any("the warm runner" in n for n in red.notes), red.notes
        [listed] = warm_checker.live(workspace)
        assert (listed["tool"], listed["kind"]) == ("jest", "test runner")
        seen = json.loads(probe.read_text(encoding="utf-8"))
        assert seen["pid"] not in (listed["pid"], os.getpid()), (seen, listed)
        cold = await _scoped(root, server=False)
        assert cold.state == "red"
        assert not any("the warm runner" in n for n in cold.notes), cold.notes
        assert _failures(red) == _failures(cold)
        assert _failures(red)[0][0] == "src/add.test.js"

        # The run's environment, not the one the warm process started with.
        monkeypatch.setenv("JEST_PROBE_MARK", "second")
        write(root, "src/add.js", _ADD.replace("a + b", "b + a"))
        green = await _scoped(root, server=True)
        assert green.state == "green", green
        assert json.loads(probe.read_text(encoding="utf-8"))["mark"] == "second"
        assert warm_checker.live(workspace)[0]["pid"] == listed["pid"]

        # The configuration's own module: the process must not keep the one it loaded.
        write(root, "jest.shared.js", _SHARED.replace("one", "two"))
        again = await _scoped(root, server=True)
        assert again.state == "green", again
        assert json.loads(probe.read_text(encoding="utf-8"))["conf"] == "two"
        said = " ".join(again.notes)
        assert "jest.shared.js, which its configuration loaded, changed; started again" in said
        assert warm_checker.live(workspace)[0]["pid"] != listed["pid"]
    finally:
        await warm_checker.release(workspace)
    assert warm_checker.live(workspace) == []


# A test that says where it runs, then waits far longer than the test allows.
_SLOW = """\
const fs = require('fs');
const { add } = require('./add');
test('waits', async () => {
  fs.writeFileSync(process.env.JEST_PROBE_OUT, String(process.pid));
  await new Promise((resolve) => setTimeout(resolve, 600000));
  expect(add(1, 2)).toBe(3);
}, 700000);
"""


@pytest.mark.timeout(600)
async def test_a_stopped_run_stops_the_warm_jest_and_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = tmp_path / "probe.txt"
    root = _project(tmp_path / "p")
    monkeypatch.setenv("JEST_PROBE_OUT", str(probe))
    workspace = Workspace.for_project(root)
    try:
        write(root, "src/add.js", _ADD.replace("a + b", "b + a"))
        assert (await _scoped(root, server=True)).state == "green"  # started, warm
        [listed] = warm_checker.live(workspace)
        write(root, "src/add.test.js", _SLOW)
        probe.unlink()
        with anyio.move_on_after(300) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(_scoped, root, server=True))
                while not probe.is_file() or not probe.read_text(encoding="utf-8"):
                    await anyio.sleep(0.1)
                tg.cancel_scope.cancel()  # the climb stops the rung, as a red beside it does
        assert not scope.cancelled_caught, "the slow test never started"
        worker = ProcessRecord(int(probe.read_text(encoding="utf-8")), 0.0)
        with anyio.fail_after(60):
            warm = ProcessRecord(int(listed["pid"]), 0.0)
            while is_alive(worker) or is_alive(warm):
                await anyio.sleep(0.1)
        assert warm_checker.live(workspace) == []
    finally:
        await warm_checker.release(workspace)


@pytest.mark.timeout(600)
async def test_the_warm_up_starts_the_runner_and_it_stops_with_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first verify after the project opened then finds jest's configuration loaded.
    await warm_up_starts(_project(tmp_path), monkeypatch, "jest", "jest runner pid")
