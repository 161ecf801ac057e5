"""How many snapshots of the tree a verify takes, and that taking fewer stays truthful: the
request's snapshot is reused for the climb only when no write was reported since it was
taken; with a watcher, the check after the climb reads the change's own files again (no
git): a write to one nobody reported yet is stale on arrival, a write elsewhere is the
watcher's to report (stale then, during the climb or after the verdict). Without a watcher
the check after the climb takes a snapshot. The ladder is faked at its seam; `watching`
stands for the watcher (its reports are `mark_changed` calls, made here by the test)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import agent_habitat.verify.runner.epochs as epochs_module
import agent_habitat.verify.runner.runner as runner_module
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.testing import EventRecorder, FakeClock
from agent_habitat.verify.runner.config import RunnerConfig
from agent_habitat.verify.runner.runner import VerifyRunner
from agent_habitat.verify.snapshot import Snapshot, take_snapshot
from agent_habitat.verify.toolchains import snapshot_of

from .fake_ladder import FakeLadder

pytestmark = pytest.mark.anyio


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    root = build_sample(tmp_path / "calc")
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    return root


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[Snapshot]:
    """Every snapshot the runner takes (the request, the climb, the check on arrival)."""
    seen: list[Snapshot] = []

    def counting(root: Path) -> Snapshot:
        seen.append(snapshot_of(root))
        return seen[-1]

    monkeypatch.setattr(runner_module, "snapshot_of", counting)
    monkeypatch.setattr(epochs_module, "snapshot_of", counting)
    return seen


@pytest.fixture
def ladder() -> FakeLadder:
    return FakeLadder()


@pytest.fixture
def bus(calc: Path) -> InMemoryEventBus:
    return InMemoryEventBus(str(calc))


@pytest.fixture
async def runner(
    calc: Path, taken: list[Snapshot], ladder: FakeLadder, bus: InMemoryEventBus
) -> AsyncIterator[tuple[VerifyRunner, FakeClock]]:
    clock = FakeClock()
    config = RunnerConfig(coalesce_seconds=0.3)
    async with VerifyRunner.open(
        calc, bus=bus, config=config, ladder=ladder, watch=False, clock=clock
    ) as r:
        r.watching = True  # the watcher's reports are the test's `mark_changed` calls
        yield r, clock


async def test_with_nothing_written_the_climb_verifies_the_requests_snapshot(
    runner: tuple[VerifyRunner, FakeClock], taken: list[Snapshot]
) -> None:
    verify, clock = runner
    ticket = await verify.request()
    await clock.advance(0.3)
    epoch = await verify.wait(ticket.task)
    assert epoch.state == "green"
    assert verify.snapshot(ticket.task) is taken[0]
    assert len(taken) == 1  # the request's: the check on arrival reads the touched files


async def test_without_a_watcher_the_check_on_arrival_takes_a_snapshot(
    runner: tuple[VerifyRunner, FakeClock], taken: list[Snapshot], calc: Path, ladder: FakeLadder
) -> None:
    verify, clock = runner
    verify.watching = False
    ladder.during = {"compile.project": calc / "src/calc/arith.py"}  # not the change's
    ticket = await verify.request()
    await clock.advance(0.3)
    epoch = await verify.wait(ticket.task)
    assert epoch.state == "stale"
    assert epoch.changed == ["src/calc/arith.py"]
    assert len(taken) == 3  # the request's, the climb's, the check on arrival


async def test_a_write_elsewhere_the_watcher_reports_during_the_climb_is_stale(
    runner: tuple[VerifyRunner, FakeClock],
    taken: list[Snapshot],
    calc: Path,
    ladder: FakeLadder,
    bus: InMemoryEventBus,
) -> None:
    verify, _ = runner
    ladder.held = {"compile.project"}
    recorder = EventRecorder(bus)
    ticket = await verify.request()
    rung = f"{ticket.task}.compile.project"
    await recorder.wait_for("environment.task.started", where=lambda e: e.task == rung)
    arith = calc / "src/calc/arith.py"
    arith.write_text(arith.read_text(encoding="utf-8") + "# more\n", encoding="utf-8")
    verify.mark_changed(["src/calc/arith.py"])
    ladder.release["compile.project"].set()
    epoch = await verify.wait(ticket.task)
    assert epoch.state == "stale"
    assert epoch.changed == ["src/calc/arith.py"]
    assert len(taken) == 1


async def test_a_write_elsewhere_reported_after_the_verdict_makes_it_stale(
    runner: tuple[VerifyRunner, FakeClock], taken: list[Snapshot], calc: Path
) -> None:
    verify, clock = runner
    ticket = await verify.request()
    await clock.advance(0.3)
    assert (await verify.wait(ticket.task)).state == "green"
    arith = calc / "src/calc/arith.py"
    arith.write_text(arith.read_text(encoding="utf-8") + "# more\n", encoding="utf-8")
    verify.mark_changed(["src/calc/arith.py"])  # the watcher's report, after the verdict
    status = await verify.status()
    assert status.stale
    assert not status.green
    assert status.changed == ["src/calc/arith.py"]


async def test_a_write_reported_before_the_climb_gets_a_fresh_snapshot(
    runner: tuple[VerifyRunner, FakeClock], taken: list[Snapshot], calc: Path
) -> None:
    verify, clock = runner
    ticket = await verify.request()
    (calc / "src/calc/text.py").write_text("X = 2\n", encoding="utf-8")
    verify.mark_changed(["src/calc/text.py"])
    await clock.advance(0.3)
    epoch = await verify.wait(ticket.task)
    verified = verify.snapshot(ticket.task)
    assert verified is not None
    assert verified.id != ticket.snapshot
    assert verified.id == take_snapshot(calc).id  # the tree with the write
    assert epoch.state == "green"
    assert len(taken) == 2  # the request's and the climb's


async def test_a_write_reported_late_but_already_in_the_snapshot_keeps_it(
    runner: tuple[VerifyRunner, FakeClock], taken: list[Snapshot], calc: Path
) -> None:
    # The usual order with a watcher: write, verify (snapshot), then the watcher's report.
    verify, clock = runner
    (calc / "src/calc/text.py").write_text("X = 4\n", encoding="utf-8")
    ticket = await verify.request()
    verify.mark_changed(["src/calc/text.py"])  # same content as in the snapshot
    await clock.advance(0.3)
    epoch = await verify.wait(ticket.task)
    assert epoch.state == "green"
    assert verify.snapshot(ticket.task) is taken[0]
    assert len(taken) == 1


async def test_a_write_not_reported_before_the_climb_is_stale_on_arrival(
    runner: tuple[VerifyRunner, FakeClock], calc: Path
) -> None:
    verify, clock = runner
    ticket = await verify.request()
    (calc / "src/calc/text.py").write_text("X = 3\n", encoding="utf-8")  # no report (yet)
    await clock.advance(0.3)
    epoch = await verify.wait(ticket.task)
    assert epoch.state == "stale"
    assert epoch.changed == ["src/calc/text.py"]
    assert not epoch.green
