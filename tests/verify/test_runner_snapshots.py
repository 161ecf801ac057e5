"""How many snapshots of the tree a verify takes, and that taking fewer stays truthful: the
request's snapshot is reused for the climb only when no write was reported since it was
taken; a write nobody reported is caught by the check after the climb (stale on arrival).
The ladder is faked at its seam; `watching` stands for the watcher (its reports are
`mark_changed` calls, made here by the test)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import agent_habitat.verify.runner.epochs as epochs_module
import agent_habitat.verify.runner.runner as runner_module
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.testing import FakeClock
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
async def runner(
    calc: Path, taken: list[Snapshot]
) -> AsyncIterator[tuple[VerifyRunner, FakeClock]]:
    clock = FakeClock()
    config = RunnerConfig(coalesce_seconds=0.3)
    bus = InMemoryEventBus(str(calc))
    async with VerifyRunner.open(
        calc, bus=bus, config=config, ladder=FakeLadder(), watch=False, clock=clock
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
    assert len(taken) == 2  # the request's and the check on arrival


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
    assert len(taken) == 3


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
    assert len(taken) == 2


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
