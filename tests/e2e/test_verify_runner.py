"""The verify runner on the real sample project: real git, watcher, ruff, dmypy, pytest."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.proc import kill_tree, members
from agent_habitat.testing import EventRecorder, FakeClock, eventually
from agent_habitat.verify import LadderRequest, stop_type_daemon
from agent_habitat.verify.rungs import DmypyDaemon
from agent_habitat.verify.runner.config import RunnerConfig
from agent_habitat.verify.runner.runner import VerifyRunner
from agent_habitat.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SLOW_TEST = """\
import os
import pathlib
import time


def test_waits_for_release() -> None:
    started = pathlib.Path(os.environ["STARTED_FILE"])  # whole or absent: a reader polls it
    started.with_suffix(".part").write_text(str(os.getpid()))
    os.replace(started.with_suffix(".part"), started)
    release = pathlib.Path(os.environ["RELEASE_FILE"])
    deadline = time.monotonic() + 60
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
"""
CRASH_TEST = """\
import os
import pathlib
import signal


def test_segfault() -> None:
    pathlib.Path(os.environ["CRASH_MARK"]).write_text("about to crash")
    os.kill(os.getpid(), signal.SIGSEGV)
"""
DUMP_TEST = """\
import json
import os
import pathlib
import tempfile

KEYS = ["HABITAT_SUBSTRATE_DIR", "HABITAT_SUBSTRATE_DB", "HABITAT_SUBSTRATE_PORT",
        "HABITAT_SUBSTRATE_PORTS", "TMPDIR"]


def test_dump_the_substrate() -> None:
    seen = {k: os.environ.get(k) for k in KEYS}
    seen["db_is_file"] = os.path.isfile(os.environ["HABITAT_SUBSTRATE_DB"])
    seen["tempdir"] = tempfile.gettempdir()
    out = pathlib.Path(os.environ["DUMP_DIR"]) / f"{os.getpid()}.json"
    out.write_text(json.dumps(seen))
"""


@pytest.fixture
async def calc(tmp_path: Path) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    _append(root / "src/calc/text.py", "X = 1\n")
    yield root
    await stop_type_daemon(root)


@pytest.fixture
def bus(calc: Path) -> InMemoryEventBus:
    return InMemoryEventBus(str(calc))


@pytest.fixture
def recorder(bus: InMemoryEventBus) -> EventRecorder:
    return EventRecorder(bus)


@pytest.fixture
async def runner(calc: Path, bus: InMemoryEventBus) -> AsyncIterator[VerifyRunner]:
    # No window: a later request supersedes (a climb now starts at once, so with a window a
    # quick rung is still young when the test's next request comes).
    async with VerifyRunner.open(calc, bus=bus, config=RunnerConfig(coalesce_seconds=0)) as r:
        yield r


@pytest.fixture
def flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Files outside the project through which the fixture's tests talk to this test."""
    folder = tmp_path / "flags"
    folder.mkdir()
    for name in ("STARTED_FILE", "RELEASE_FILE", "CRASH_MARK"):
        monkeypatch.setenv(name, str(folder / name.lower()))
    monkeypatch.setenv("DUMP_DIR", str(folder))
    return folder


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


async def test_a_request_comes_back_green_and_a_later_write_makes_it_stale(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder
) -> None:
    ticket = await runner.request(wait=True)
    assert ticket.result is not None
    assert ticket.result.state == "green", ticket.result
    assert [r.state for r in ticket.result.rungs] == ["green", "green", "green"]
    status = await runner.status()
    assert status.green
    assert status.current_snapshot == ticket.result.snapshot
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    # The watcher asks `git check-ignore` (a process) about a path it has not seen change
    # before: seconds on a loaded machine, and a write never seen would wait for ever.
    stale = await recorder.wait_for("verify.epoch.stale", bound_seconds=30)
    assert stale.data["changed"] == ["src/calc/arith.py"]
    assert stale.data["phase"] == "watch"
    after = await runner.status()
    assert not after.green
    assert after.epoch is not None
    assert after.epoch.state == "stale"
    assert "src/calc/arith.py" in after.summary


async def test_a_git_checkout_of_the_changed_file_makes_the_epoch_fresh_again(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder
) -> None:
    ticket = await runner.request(LadderRequest(policy="minimal"), wait=True)
    assert ticket.result is not None
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    await recorder.wait_for("verify.epoch.stale", bound_seconds=30)
    assert (await runner.status()).stale
    subprocess.run(["git", "checkout", "--", "src/calc/arith.py"], cwd=calc, check=True)
    fresh = await recorder.wait_for("verify.epoch.fresh", bound_seconds=10)
    assert fresh.data["phase"] == "watch"
    status = await runner.status()
    assert not status.stale
    assert status.current_snapshot == ticket.result.snapshot
    assert status.epoch is not None
    assert status.epoch.state == ticket.result.state


async def test_an_ignored_write_never_makes_an_epoch_stale(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder
) -> None:
    await runner.request(LadderRequest(policy="minimal"), wait=True)
    (calc / "src/calc/__pycache__").mkdir(exist_ok=True)
    (calc / "src/calc/__pycache__/junk.pyc").write_bytes(b"junk")
    (calc / ".mypy_cache").mkdir(exist_ok=True)
    (calc / ".mypy_cache/junk.json").write_text("{}", encoding="utf-8")
    _append(calc / "README.md", "\nmore\n")  # a real change, written last
    stale = await recorder.wait_for("verify.epoch.stale", bound_seconds=30)
    assert stale.data["all_changed"] == ["README.md"]


async def test_a_write_during_the_run_makes_the_running_epoch_stale(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder, flags: Path
) -> None:
    (calc / "tests/test_slow.py").write_text(SLOW_TEST, encoding="utf-8")
    ticket = await runner.request(
        LadderRequest(rungs=["test.scoped"], filter=["tests/test_slow.py"])
    )
    await eventually(lambda: (flags / "started_file").exists(), within=30)
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    stale = await recorder.wait_for("verify.epoch.stale", bound_seconds=30)
    assert stale.data["changed"] == ["src/calc/arith.py"]
    status = await runner.status()
    assert status.running == ticket.task
    assert status.stale
    assert not status.green
    (flags / "release_file").write_text("go", encoding="utf-8")
    done = await runner.wait(ticket.task)
    assert done.verified_state == "green"
    assert done.state == "stale"
    assert not (await runner.status()).green


async def test_three_quick_requests_are_one_run(
    calc: Path, bus: InMemoryEventBus, recorder: EventRecorder
) -> None:
    # The default 1.5 s window, on a clock that does not move: three requests are "within
    # 0.5 s" however long their snapshots take on a loaded machine (two epochs once, when
    # the third request's snapshot came after the window had closed).
    clock = FakeClock()
    async with VerifyRunner.open(calc, bus=bus, clock=clock) as runner:
        assert runner.config.coalesce_seconds == 1.5
        tickets = [
            await runner.request(LadderRequest(policy="minimal")),
            await runner.request(LadderRequest(policy="minimal", files=["src/calc/arith.py"])),
            await runner.request(LadderRequest(rungs=["diagnose.files"])),
        ]
        assert len({t.task for t in tickets}) == 1
        epoch = await runner.wait(tickets[0].task)
    assert epoch.requests == 3
    assert epoch.state == "green"
    assert set(epoch.touched) == {"src/calc/arith.py", "src/calc/text.py"}
    # One epoch: the chain started once; a climb that began before a request joined started
    # again (verify.epoch.started once per climb, every one of this epoch).
    chain = [e for e in recorder.events if e.task == tickets[0].task and e.data.get("chain")]
    assert [e.kind for e in chain] == ["environment.task.started", "environment.task.completed"]
    started = [e for e in recorder.events if e.kind == "verify.epoch.started"]
    assert {e.data["epoch"] for e in started} == {epoch.epoch}
    # A request the young climb already covers (the second and third ask for nothing the
    # first does not) joins it without a restart, so the started event counts the requests
    # that came before the climb began: 3 when all came first, fewer on a loaded machine
    # (2 in a loaded CI run). The epoch counts all three (above).
    assert 1 <= started[-1].data["requests"] <= 3
    assert recorder.kinds().count("environment.task.queued") == 3


async def test_a_lone_request_climbs_the_real_ladder_before_its_window_closes(
    calc: Path, bus: InMemoryEventBus, recorder: EventRecorder
) -> None:
    clock = FakeClock()  # the 1.5 s window closes only if this clock moves; it never does
    async with VerifyRunner.open(calc, bus=bus, clock=clock) as runner:
        ticket = await runner.request(LadderRequest(policy="minimal"))
        epoch = await runner.wait(ticket.task)
    assert epoch.state == "green"
    assert clock.monotonic() == 0.0
    # In the runner's own order: queued, then the climb and its first rung, then the end.
    kinds = [e.kind for e in recorder.events if e.task and e.task.startswith(ticket.task)]
    assert kinds[:4] == [
        "environment.task.queued",
        "verify.epoch.started",
        "environment.task.started",
        "environment.task.started",
    ]
    assert epoch.result is not None
    assert epoch.result.timing is not None
    timing = epoch.result.timing
    assert timing.queue_s is None
    assert timing.coalesce_s is None
    parts = [timing.rungs_s, timing.baseline_s or 0, timing.prepare_s or 0]
    assert round(sum(parts), 3) == timing.wall_s


async def test_a_new_request_cancels_a_chain_in_test_scoped_and_leaves_no_process(
    runner: VerifyRunner, calc: Path, flags: Path
) -> None:
    (calc / "tests/test_slow.py").write_text(SLOW_TEST, encoding="utf-8")
    first = await runner.request(
        LadderRequest(rungs=["test.scoped"], filter=["tests/test_slow.py"])
    )
    await eventually(lambda: (flags / "started_file").exists(), within=30)
    record = runner.processes(first.task)[f"{first.task}.test.scoped"]
    assert psutil.pid_exists(record.pid)
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    second = await runner.request(LadderRequest(policy="minimal"))
    assert second.superseded == first.task
    old = await runner.wait(first.task)
    assert old.state == "cancelled"
    (rung,) = old.rungs
    assert rung.state == "cancelled"
    assert rung.reason == f"superseded by {second.task}"
    assert members(record) == []
    pid = int((flags / "started_file").read_text(encoding="utf-8"))
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert (await runner.wait(second.task)).state == "green"


async def test_a_new_request_cancels_a_chain_in_compile_project_with_its_grandchildren(
    runner: VerifyRunner, calc: Path, flags: Path
) -> None:
    # A configured check that leaves a grandchild running: the whole tree must go.
    _append(
        calc / "pyproject.toml", 'compile_project = "sleep 60 & echo $! > $STARTED_FILE; wait"\n'
    )
    first = await runner.request(LadderRequest(rungs=["compile.project"]))
    await eventually(lambda: (flags / "started_file").exists(), within=30)
    await eventually(lambda: bool((flags / "started_file").read_text(encoding="utf-8")), within=30)
    grandchild = int((flags / "started_file").read_text(encoding="utf-8"))
    record = runner.processes(first.task)[f"{first.task}.compile.project"]
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    second = await runner.request(LadderRequest(policy="minimal"))
    assert second.superseded == first.task
    old = await runner.wait(first.task)
    assert old.state == "cancelled"
    assert [(r.state, r.reason) for r in old.rungs] == [
        ("cancelled", f"superseded by {second.task}")
    ]
    assert members(record) == []
    gone = not psutil.pid_exists(grandchild)
    assert gone or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    assert (await runner.wait(second.task)).state == "green"


async def test_a_cancel_in_compile_project_kills_the_check(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder
) -> None:
    ticket = await runner.request(LadderRequest(rungs=["compile.project"]))
    started = await recorder.wait_for(
        "environment.task.started",
        where=lambda e: e.data.get("rung") == "compile.project",
        bound_seconds=30,
    )
    assert started.task is not None
    await eventually(lambda: started.task in runner.processes(ticket.task), within=10)
    record = runner.processes(ticket.task)[started.task]
    cancelled = await runner.cancel()
    assert cancelled is not None
    assert cancelled.state == "cancelled"
    assert [r.state for r in cancelled.rungs] == ["cancelled"]
    assert members(record) == []


async def test_each_test_task_gets_its_own_substrate_and_it_is_gone_afterwards(
    runner: VerifyRunner, calc: Path, flags: Path
) -> None:
    (calc / "tests/test_dump.py").write_text(DUMP_TEST, encoding="utf-8")
    ticket = await runner.request(
        LadderRequest(rungs=["test.scoped", "test.full"], filter=["tests/test_dump.py"]), wait=True
    )
    assert ticket.result is not None
    assert ticket.result.state == "green", [
        (r.rung, r.state, r.reason, r.exit_code, r.output[-1500:])
        for r in (ticket.result.result.rungs if ticket.result.result else [])
    ]
    dumps = [json.loads(p.read_text(encoding="utf-8")) for p in flags.glob("*.json")]
    assert len(dumps) == 2
    for seen in dumps:
        assert all(seen[k] for k in ("HABITAT_SUBSTRATE_DIR", "HABITAT_SUBSTRATE_PORT", "TMPDIR"))
        assert seen["db_is_file"]
        assert seen["tempdir"] == seen["TMPDIR"]
        assert seen["HABITAT_SUBSTRATE_PORTS"] == seen["HABITAT_SUBSTRATE_PORT"]
        assert not Path(seen["HABITAT_SUBSTRATE_DIR"]).exists()
    one, two = dumps
    assert one["HABITAT_SUBSTRATE_DIR"] != two["HABITAT_SUBSTRATE_DIR"]
    assert one["HABITAT_SUBSTRATE_DB"] != two["HABITAT_SUBSTRATE_DB"]


async def test_a_segfaulting_test_is_reported_died_with_its_name_at_once(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder, flags: Path
) -> None:
    (calc / "tests/test_crash.py").write_text(CRASH_TEST, encoding="utf-8")
    ticket = await runner.request(
        LadderRequest(rungs=["test.scoped"], filter=["tests/test_crash.py"])
    )
    await eventually(lambda: (flags / "crash_mark").exists(), within=30)
    # "At once": long before the rung's timeout (900 s), not a speed claim; the crash, its
    # reaping and the read of its last lines take seconds on a loaded machine.
    died = await recorder.wait_for("environment.task.died", bound_seconds=30)
    assert died.task == f"{ticket.task}.test.scoped"
    assert died.data["signal"] == "SIGSEGV"
    assert died.data["test"] == "tests/test_crash.py::test_segfault"
    assert died.data["last_lines"]
    epoch = await runner.wait(ticket.task)
    assert epoch.state == "died"
    (rung,) = epoch.rungs
    assert rung.state == "died"
    assert rung.reason == "killed by SIGSEGV while running tests/test_crash.py::test_segfault"
    assert not (await runner.status()).green


async def test_a_dead_dmypy_daemon_is_restarted_and_the_event_says_so(
    runner: VerifyRunner, calc: Path, recorder: EventRecorder
) -> None:
    await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
    record = DmypyDaemon(Workspace.for_project(calc)).record()
    assert record is not None
    await kill_tree(record, sig=signal.SIGKILL)
    _append(calc / "src/calc/text.py", "Z: int = 3\n")
    ticket = await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
    ended = await recorder.wait_for(
        "environment.task.completed", where=lambda e: e.task == f"{ticket.task}.compile.project"
    )
    assert ended.data["notes"] == [f"dmypy daemon (pid {record.pid}) was dead; restarted"]


async def test_time_accounting_adds_up(runner: VerifyRunner) -> None:
    call = runner.accounting.call_started("agent-1")
    await runner.request(LadderRequest(policy="minimal"), wait=True)
    runner.accounting.call_ended("agent-1", call, blocked=True)
    thinking = runner.accounting.call_started("agent-1")
    runner.accounting.call_ended("agent-1", thinking, blocked=False)
    status = await runner.status(session="agent-1")
    session = status.time.session
    assert session is not None
    assert session.calls == 2
    assert session.blocked_s > 0
    assert session.environment_s > 0
    assert session.active_s == pytest.approx(session.reasoning_s + session.blocked_s, abs=1e-9)
    assert session.active_s <= session.wall_s
    assert status.time.workspace.wall_s >= session.wall_s
