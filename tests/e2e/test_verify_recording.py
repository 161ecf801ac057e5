"""Selection from the second edit with no ritual: every test run records per-test dependency
data, a server records it in the background at idle priority, and a verify never waits for
that recording (issue 22). Real git, real pytest with the recorder plugin, a real host."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.habitat import Habitat
from agent_habitat.proc import DEFAULT_POLICY
from agent_habitat.testing import EventRecorder, eventually
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, LadderResult, run_ladder, stop_type_daemon
from agent_habitat.verify.select.testdeps import deps_store_dir, load_testdeps
from agent_habitat.workspace import Workspace
from git_tree import git, write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(autouse=True)
def _recording_group_at_normal_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recording's own session group stays at nice 0 in these tests. `make_idle` lowers
    it to 19 (tests/proc/test_priority.py checks that): a recording then runs only on a
    core nothing else wants, and on a machine loaded by other work (the suite's workers,
    CI's neighbours) it made no progress within the bounds these tests wait for it. The
    recording itself is still SCHED_IDLE at nice 19, as the tests check."""
    from agent_habitat.proc import priority

    monkeypatch.setattr(priority, "_autogroup_to", lambda pid, nice: None)


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


async def _scoped(root: Path) -> LadderResult:
    return await run_ladder(root, LadderRequest(rungs=["test.scoped"]), bus=InMemoryEventBus("t"))


def _runs(selected: list[str], test: str) -> bool:
    return test in selected or test.partition("::")[0] in selected


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return build_sample(tmp_path / "calc")


def _shout(root: Path) -> str:
    """Edits shout's body (no test but test_text's reaches it); returns text.py as it was."""
    text = (root / "src/calc/text.py").read_text(encoding="utf-8")
    _edit(root, "src/calc/text.py", 'return s.upper() + "!"', 'return s.upper() + "!" * 1')
    return text


async def test_the_first_scoped_fallback_records_and_the_second_edit_selects_precisely(
    calc: Path,
) -> None:
    # First edit: inside add and shout, which every test file imports: with no data yet,
    # the import graph selects every test, and that run records them.
    arith, text = (calc / "src/calc/arith.py").read_text("utf-8"), _shout(calc)
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    first = await _scoped(calc)
    (rung,) = first.rungs
    assert rung.state == "green", rung
    assert first.selection is not None
    assert len(first.selection.tests) == 3, first.selection
    notes = " ".join(rung.notes)
    assert "no test dependency data recorded yet" in notes
    assert "recorded test dependencies of 4 tests" in notes
    # Second edit, inside mul, add and shout as at HEAD: the tests that ran mul, and those
    # that ran add (their record saw another add), by the data, no full run by hand.
    (calc / "src/calc/arith.py").write_text(arith, encoding="utf-8")
    (calc / "src/calc/text.py").write_text(text, encoding="utf-8")
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    second = await _scoped(calc)
    (rung,) = second.rungs
    assert rung.state == "green", rung
    assert second.selection is not None
    assert second.selection.tests == ["tests/test_arith.py", "tests/test_report.py"]
    said = " ".join(rung.notes)
    assert "3 test(s) from recorded dependency data (4 on record)" in said, said
    assert "test_text" not in said, said


async def test_a_revert_reuses_the_data_recorded_before_the_edit(calc: Path) -> None:
    original = (calc / "src/calc/arith.py").read_text(encoding="utf-8")
    text = _shout(calc)
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    await _scoped(calc)  # every test (test_text's, test_arith's, test_report's), recorded
    (calc / "src/calc/text.py").write_text(text, encoding="utf-8")
    (calc / "src/calc/arith.py").write_text(original, encoding="utf-8")
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    await _scoped(calc)  # test_mul and test_total recorded again, with mul edited
    (calc / "src/calc/arith.py").write_text(original, encoding="utf-8")
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    result = await _scoped(calc)
    assert result.selection is not None
    # Their newest record saw mul edited; the one from before the edit sees mul as it is:
    # just the tests that ran add.
    assert result.selection.tests == ["tests/test_arith.py::test_add", "tests/test_report.py"]


# A test the background recording blocks in, while the `hold` file exists; it ignores
# SIGTERM, so the cancelled recording outlives the verify that cancelled it by the kill
# grace: the verify provably did not wait for it.
HOLD_TEST = """\
import os
import pathlib
import signal
import time


def test_holds_while_told() -> None:
    hold = pathlib.Path(os.environ["HOLD_FILE"])
    if not hold.exists():
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    started = pathlib.Path(os.environ["STARTED_FILE"])  # whole or absent: a reader polls it
    started.with_suffix(".part").write_text(str(os.getpid()))
    os.replace(started.with_suffix(".part"), started)
    deadline = time.monotonic() + 120
    while hold.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
"""


@pytest.fixture
async def held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Path, Path, Path]]:
    root = tmp_path / "shop"
    write(root, "shop/__init__.py", "")
    write(root, "shop/core.py", "def double(x: int) -> int:\n    return x * 2\n")
    write(
        root,
        "tests/test_core.py",
        "from shop.core import double\n\n\ndef test_double() -> None:\n    assert double(2) == 4\n",
    )
    write(root, "tests/test_hold.py", HOLD_TEST)
    write(root, ".gitignore", ".mypy_cache/\n.ruff_cache/\n__pycache__/\n")
    write(
        root,
        "pyproject.toml",
        '[project]\nname = "shop"\nversion = "0"\n\n'
        f"[tool.habitat.ladder]\npython = {sys.executable!r}\ndmypy = false\n",
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "shop")
    ProjectTrust().grant_sync(root, "verb")  # the warm-up (and so the recording) waits for trust
    hold, started = tmp_path / "hold", tmp_path / "started"
    hold.write_text("hold", encoding="utf-8")
    monkeypatch.setenv("HOLD_FILE", str(hold))
    monkeypatch.setenv("STARTED_FILE", str(started))
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    monkeypatch.setattr(DEFAULT_POLICY, "grace_seconds", 60.0)
    yield root, hold, started
    hold.unlink(missing_ok=True)
    await stop_type_daemon(root)


async def test_a_verify_during_the_background_recording_cancels_it_and_does_not_wait(
    held: tuple[Path, Path, Path],
) -> None:
    root, hold, started = held
    workspace = Workspace.for_project(root)
    async with Habitat.open(workspace, project=root) as habitat:
        events = EventRecorder(habitat.bus)
        runner = habitat.verify
        recorder = habitat.verifier.recorder
        assert runner is not None
        assert recorder is not None
        await events.wait_for("verify.recording.started", bound_seconds=120)
        await eventually(started.exists, within=120)
        recording = psutil.Process(int(started.read_text(encoding="utf-8")))
        assert recording.nice() == 19
        if sys.platform == "linux":
            assert os.sched_getscheduler(recording.pid) == os.SCHED_IDLE
        _edit(root, "shop/core.py", "x * 2", "x + x")
        with anyio.fail_after(120):
            ticket = await runner.request(LadderRequest(policy="minimal"))
            await events.wait_for(
                "environment.task.started",
                where=lambda e: e.task == f"{ticket.task}.diagnose.files",
                bound_seconds=120,
            )
            # The recording ignores SIGTERM and has a minute's grace: the verify's first
            # rung started while it was still alive, so it did not wait for the kill.
            assert recording.is_running(), "the verify waited for the recording to die"
            assert recorder.state == "cancelling"
            done = await runner.wait(ticket.task)
        assert done.state == "green", done
        hold.unlink()  # the cancelled recording's test returns; its record is thrown away
        await eventually(lambda: not recording.is_running(), within=60)
        await events.wait_for("verify.recording.cancelled", bound_seconds=60)
        assert recorder.cancels == 1
        deps = load_testdeps(deps_store_dir(workspace.state_dir))
        assert deps is None or "tests/test_hold.py::test_holds_while_told" not in deps.records
        # Once verify is quiet, the recording plans again and records what is missing.
        finished = await events.wait_for("verify.recording.finished", bound_seconds=120)
        assert "recorded test dependencies of" in str(finished.data["note"])
        deps = load_testdeps(deps_store_dir(workspace.state_dir))
        assert deps is not None
        assert "tests/test_hold.py::test_holds_while_told" in deps.records
        assert "tests/test_core.py::test_double" in deps.records


TABLE_MODULE = """\
TABLE = {"a": 1, "b": 2}


def first() -> int:
    return TABLE["a"]


def second() -> int:
    return TABLE["b"]
"""


async def test_the_background_recording_records_heads_content_so_an_edit_after_a_revert_is_precise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tab"
    write(root, "tab/__init__.py", "")
    write(root, "tab/core.py", TABLE_MODULE)
    for name in ("first", "second"):
        write(
            root,
            f"tests/test_{name}.py",
            f"from tab.core import {name}\n\n\ndef test_{name}() -> None:\n"
            f"    assert {name}() > 0\n",
        )
    # Skipped at HEAD's export: it may run less there than here, so it is not kept from it.
    write(
        root,
        "tests/test_skip.py",
        "import pytest\n\n\ndef test_skip() -> None:\n    pytest.skip('here')\n",
    )
    write(root, ".gitignore", ".mypy_cache/\n.ruff_cache/\n__pycache__/\n")
    write(
        root,
        "pyproject.toml",
        '[project]\nname = "tab"\nversion = "0"\n\n'
        f"[tool.habitat.ladder]\npython = {sys.executable!r}\ndmypy = false\n",
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tab")
    ProjectTrust().grant_sync(root, "verb")
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    # The tree is edited when the project opens: import-time code (the table) differs.
    _edit(root, "tab/core.py", '"b": 2}', '"b": 3}')
    workspace = Workspace.for_project(root)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    async with Habitat.open(workspace, project=root) as habitat:
        events = EventRecorder(habitat.bus)
        started = await events.wait_for("verify.recording.started", bound_seconds=120)
        assert "HEAD's content" in " ".join(started.data["reasons"])
        finished = await events.wait_for("verify.recording.finished", bound_seconds=120)
        assert "recorded test dependencies of 2 tests" in str(finished.data["note"]), finished
    deps = load_testdeps(deps_store_dir(workspace.state_dir))
    assert deps is not None
    (clean,) = [run for run in deps.runs.values() if run.head == head and not run.dirty]
    assert sorted(clean.tests) == [
        "tests/test_first.py::test_first",
        "tests/test_second.py::test_second",
    ]
    at_head = TABLE_MODULE.encode()
    assert clean.files["tab/core.py"] == hashlib.sha256(at_head).hexdigest()
    # Edited runs after it (the table differs in each) never push the clean record out.
    for value in ("4", "5", "6"):
        _edit(root, "tab/core.py", '"b": ', f'"b": {value}, "x": ')
        await _scoped(root)
        (root / "tab/core.py").write_text(TABLE_MODULE, encoding="utf-8")
    # Back at HEAD's table, an edit in `second` alone: the clean run vouches for test_first.
    _edit(root, "tab/core.py", 'return TABLE["b"]', 'return TABLE["b"] + 0')
    result = await _scoped(root)
    assert result.selection is not None
    selected = result.selection.tests
    assert _runs(selected, "tests/test_second.py::test_second"), result.selection
    assert not _runs(selected, "tests/test_first.py::test_first"), result.selection


async def test_a_verify_pauses_the_recording_of_heads_export_and_it_resumes_once_quiet(
    held: tuple[Path, Path, Path],
) -> None:
    root, hold, started = held
    _edit(root, "shop/core.py", "x * 2", "x + x")  # dirty at open: HEAD's export is recorded
    workspace = Workspace.for_project(root)
    async with Habitat.open(workspace, project=root) as habitat:
        events = EventRecorder(habitat.bus)
        runner, recorder = habitat.verify, habitat.verifier.recorder
        assert runner is not None
        assert recorder is not None
        began = await events.wait_for("verify.recording.started", bound_seconds=120)
        assert "HEAD's content" in " ".join(began.data["reasons"])
        await eventually(started.exists, within=120)
        recording = psutil.Process(int(started.read_text(encoding="utf-8")))
        with anyio.fail_after(120):
            ticket = await runner.request(LadderRequest(policy="minimal"))
            # Stopped from the request itself, before the verify's first rung starts.
            assert recorder.state == "paused"
            # The kernel acts on SIGSTOP when the idle-priority process next runs.
            await eventually(lambda: recording.status() == psutil.STATUS_STOPPED, within=60)
            done = await runner.wait(ticket.task)
        assert done.state == "green", done
        assert recording.is_running()  # paused, not killed
        await eventually(lambda: recording.status() != psutil.STATUS_STOPPED, within=60)
        hold.unlink()
        finished = await events.wait_for("verify.recording.finished", bound_seconds=120)
        assert finished.data["pauses"] == 1, finished
        assert "recorded test dependencies of 2 tests" in str(finished.data["note"]), finished
        assert recorder.cancels == 0
        assert "verify.recording.cancelled" not in events.kinds()
    deps = load_testdeps(deps_store_dir(workspace.state_dir))
    assert deps is not None
    assert any(not run.dirty for run in deps.runs.values())
