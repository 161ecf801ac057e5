"""The runner's rules with the ladder faked at its one seam: coalesce, supersede, cancel,
stale, progress. Real git snapshots on a sample repository; no processes."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.errors import NotFoundError, UsageError
from agent_habitat.events import InMemoryEventBus
from agent_habitat.testing import EventRecorder, FakeClock
from agent_habitat.verify.models import LadderRequest
from agent_habitat.verify.runner.config import RunnerConfig
from agent_habitat.verify.runner.models import summary
from agent_habitat.verify.runner.report import epoch_report
from agent_habitat.verify.runner.runner import VerifyRunner
from agent_habitat.verify.runner.text import epoch_summary

from .fake_ladder import FakeLadder

pytestmark = pytest.mark.anyio


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    root = build_sample(tmp_path / "calc")
    _append(root / "src/calc/text.py", "X = 1\n")
    return root


@pytest.fixture
def ladder() -> FakeLadder:
    return FakeLadder()


@pytest.fixture
def bus(calc: Path) -> InMemoryEventBus:
    return InMemoryEventBus(str(calc))


@pytest.fixture
async def runner(
    calc: Path, ladder: FakeLadder, bus: InMemoryEventBus
) -> AsyncIterator[VerifyRunner]:
    # No window: a later request supersedes (the window's own tests use `timed_runner`).
    config = RunnerConfig(coalesce_seconds=0)
    async with VerifyRunner.open(calc, bus=bus, config=config, ladder=ladder, watch=False) as r:
        yield r


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def timed_runner(
    calc: Path, ladder: FakeLadder, bus: InMemoryEventBus, clock: FakeClock
) -> AsyncIterator[VerifyRunner]:
    """A runner whose coalesce window closes only when the test advances the clock."""
    config = RunnerConfig(coalesce_seconds=0.3)
    async with VerifyRunner.open(
        calc, bus=bus, config=config, ladder=ladder, watch=False, clock=clock
    ) as r:
        yield r


async def test_a_lone_request_starts_its_climb_without_waiting_for_the_window(
    timed_runner: VerifyRunner, ladder: FakeLadder, clock: FakeClock
) -> None:
    # The fake clock never moves: the 0.3 s window never closes, and the climb is done.
    ticket = await timed_runner.request(LadderRequest(policy="minimal"))
    epoch = await timed_runner.wait(ticket.task)
    assert epoch.state == "green"
    assert len(ladder.calls) == 1
    assert clock.monotonic() == 0.0
    assert clock.sleepers == 0  # nothing sleeps on the window either
    assert epoch.result is not None
    timing = epoch.result.timing
    assert timing is not None
    assert timing.queue_s is None  # absent: it waited for nothing
    assert timing.coalesce_s is None


async def test_requests_within_the_window_join_one_epoch_restarted_with_their_union(
    timed_runner: VerifyRunner, ladder: FakeLadder, clock: FakeClock, bus: InMemoryEventBus
) -> None:
    runner = timed_runner
    ladder.held = {"diagnose.files"}
    recorder = EventRecorder(bus)
    first = await runner.request(LadderRequest(policy="minimal", files=["src/calc/text.py"]))
    rung = f"{first.task}.diagnose.files"
    # It climbs at once, the window still open (the clock has not moved).
    await recorder.wait_for("environment.task.started", where=lambda e: e.task == rung)
    await clock.advance(0.1)
    second = await runner.request(LadderRequest(policy="strict", files=["src/calc/arith.py"]))
    await clock.advance(0.1)
    third = await runner.request(LadderRequest(policy="minimal"))
    assert [first.coalesced, second.coalesced, third.coalesced] == [False, True, True]
    assert first.task == second.task == third.task
    # The young climb stopped and started again with the union.
    await recorder.wait_for("verify.epoch.started", where=lambda e: e.data.get("requests") == 3)
    ladder.release["diagnose.files"].set()
    epoch = await runner.wait(first.task)
    assert 2 <= len(ladder.calls) <= 3
    merged = ladder.calls[-1]
    assert merged.policy == "strict"
    assert merged.files == ["src/calc/arith.py", "src/calc/text.py"]
    assert epoch.requests == 3
    assert epoch.epoch == first.epoch
    assert epoch.state == "green"
    assert [r.state for r in epoch.rungs] == ["green"] * 4  # strict's rungs, none cancelled
    assert any("coalesced: 3 requests" in note for note in epoch.notes)
    # One epoch: its chain started and ended once; every climb was of that epoch.
    chain = [e.kind for e in recorder.events if e.task == first.task and e.data.get("chain")]
    assert chain == ["environment.task.started", "environment.task.completed"]
    starts = [e for e in recorder.events if e.kind == "verify.epoch.started"]
    assert {e.data["epoch"] for e in starts} == {first.epoch}
    assert epoch.result is not None
    assert epoch.result.timing is not None
    assert epoch.result.timing.coalesce_s is not None  # the thrown-away climb, said


async def test_a_request_after_the_window_is_not_merged(
    timed_runner: VerifyRunner, ladder: FakeLadder, clock: FakeClock, bus: InMemoryEventBus
) -> None:
    runner = timed_runner
    recorder = EventRecorder(bus)
    first = await runner.request(LadderRequest(policy="minimal", files=["src/calc/text.py"]))
    await clock.advance(0.3)
    await recorder.wait_for("verify.epoch.started", where=lambda e: e.task == first.task)
    later = await runner.request(LadderRequest(policy="strict", files=["src/calc/arith.py"]))
    assert not later.coalesced
    assert later.task != first.task
    await clock.advance(0.3)
    assert (await runner.wait(later.task)).state == "green"
    assert [call.files for call in ladder.calls][-1] == ["src/calc/arith.py"]


async def test_a_later_request_cancels_a_chain_that_reached_compile_project(
    runner: VerifyRunner, ladder: FakeLadder, calc: Path, bus: InMemoryEventBus
) -> None:
    ladder.held = {"compile.project"}
    recorder = EventRecorder(bus)
    first = await runner.request()
    await recorder.wait_for(
        "environment.task.started", where=lambda e: e.task == f"{first.task}.compile.project"
    )
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    second = await runner.request()
    assert second.superseded == first.task
    old = await runner.wait(first.task)
    assert old.state == "cancelled"
    assert old.superseded_by == second.task
    states = {r.rung: (r.state, r.reason) for r in old.rungs}
    assert states["diagnose.files"] == ("green", None)
    assert states["compile.project"] == ("cancelled", f"superseded by {second.task}")
    assert old.result is not None
    assert old.result.state == "cancelled"
    ladder.held = set()
    new = await runner.wait(second.task)
    assert new.state == "green"
    assert "src/calc/arith.py" in new.touched
    # Never two chains at once: the old one finished before the new one began.
    order = [(e.kind, e.task) for e in recorder.events if e.kind.startswith("verify.epoch.")]
    assert order.index(("verify.epoch.finished", first.task)) < order.index(
        ("verify.epoch.started", second.task)
    )


async def test_a_running_diagnose_files_finishes_before_its_chain_stops(
    runner: VerifyRunner, ladder: FakeLadder, calc: Path, bus: InMemoryEventBus
) -> None:
    ladder.held = {"diagnose.files"}
    recorder = EventRecorder(bus)
    first = await runner.request()
    await recorder.wait_for(
        "environment.task.started", where=lambda e: e.task == f"{first.task}.diagnose.files"
    )
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    second = await runner.request()
    assert runner.epoch(first.task) is not None
    ladder.release["diagnose.files"].set()
    old = await runner.wait(first.task)
    states = {r.rung: r.state for r in old.rungs}
    assert states["diagnose.files"] == "green"
    assert states["compile.project"] in ("cancelled", "waiting")
    assert old.state == "cancelled"
    assert (await runner.wait(second.task)).state == "green"


async def test_a_request_the_running_chain_already_answers_joins_it(
    runner: VerifyRunner, ladder: FakeLadder, bus: InMemoryEventBus
) -> None:
    ladder.held = {"compile.project"}
    recorder = EventRecorder(bus)
    first = await runner.request()
    await recorder.wait_for(
        "environment.task.started", where=lambda e: e.task == f"{first.task}.compile.project"
    )
    again = await runner.request(LadderRequest(policy="minimal"))
    assert again.task == first.task
    assert again.coalesced
    ladder.release["compile.project"].set()
    assert (await runner.wait(first.task)).state == "green"
    assert len(ladder.calls) == 1


async def test_cancelling_a_queued_chain_never_climbs(
    runner: VerifyRunner, ladder: FakeLadder
) -> None:
    ticket = await runner.request()
    cancelled = await runner.cancel(ticket.task)
    assert cancelled is not None
    assert cancelled.state == "cancelled"
    assert ladder.calls == []
    assert await runner.cancel() is None


async def test_a_write_after_green_makes_the_epoch_stale_and_never_green(
    runner: VerifyRunner, calc: Path, bus: InMemoryEventBus
) -> None:
    recorder = EventRecorder(bus)
    ticket = await runner.request(wait=True)
    assert ticket.result is not None
    assert ticket.result.state == "green"
    assert (await runner.status()).green
    _append(calc / "src/calc/text.py", "Z = 3\n")
    runner.mark_changed([calc / "src/calc/text.py"])
    stale = await recorder.wait_for("verify.epoch.stale")
    assert stale.data["changed"] == ["src/calc/text.py"]
    status = await runner.status()
    assert not status.green
    assert status.stale
    assert status.epoch is not None
    assert status.epoch.state == "stale"
    assert status.epoch.verified_state == "green"
    assert status.summary.startswith("stale: green on")
    assert "src/calc/text.py" in status.summary


async def test_putting_the_file_back_makes_a_stale_epoch_its_own_verdict_again(
    runner: VerifyRunner, calc: Path, bus: InMemoryEventBus
) -> None:
    recorder = EventRecorder(bus)
    ticket = await runner.request(wait=True)
    assert ticket.result is not None
    text = calc / "src/calc/text.py"
    verified = text.read_text(encoding="utf-8")
    text.write_text(verified + "Z = 3\n", encoding="utf-8")
    runner.mark_changed([text])
    await recorder.wait_for("verify.epoch.stale")
    text.write_text(verified, encoding="utf-8")  # an undo
    runner.mark_changed([text])
    fresh = await recorder.wait_for("verify.epoch.fresh")
    assert fresh.data["snapshot"] == ticket.result.snapshot
    assert fresh.data["state"] == "green"
    status = await runner.status()
    assert status.green
    assert not status.stale
    assert status.changed == []
    assert status.current_snapshot == ticket.result.snapshot


async def test_a_clean_file_checked_out_again_makes_the_status_fresh(
    runner: VerifyRunner, calc: Path
) -> None:
    await runner.request(wait=True)
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    assert (await runner.status()).stale  # no watcher here: the status compares the tree
    subprocess.run(["git", "checkout", "--", "src/calc/arith.py"], cwd=calc, check=True)
    status = await runner.status()
    assert status.green
    assert status.epoch is not None
    assert (status.epoch.state, status.epoch.changed) == ("green", [])


async def test_one_of_two_changed_files_put_back_leaves_only_the_other_changed(
    runner: VerifyRunner, calc: Path
) -> None:
    await runner.request(wait=True)
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    _append(calc / "README.md", "more\n")
    assert (await runner.status()).changed == ["README.md", "src/calc/arith.py"]
    subprocess.run(["git", "checkout", "--", "src/calc/arith.py"], cwd=calc, check=True)
    status = await runner.status()
    assert status.stale
    assert status.changed == ["README.md"]


async def test_a_tree_that_moved_during_the_climb_stays_stale_once_back(
    runner: VerifyRunner, calc: Path, ladder: FakeLadder
) -> None:
    arith = calc / "src/calc/arith.py"
    before = arith.read_text(encoding="utf-8")
    ladder.during = {"compile.project": arith}
    ticket = await runner.request(wait=True)
    assert ticket.result is not None
    assert ticket.result.state == "stale"
    arith.write_text(before, encoding="utf-8")
    status = await runner.status()
    assert status.current_snapshot == ticket.result.snapshot
    assert status.stale
    assert not status.green
    assert "changed while it ran" in status.summary


async def test_a_rewrite_with_the_same_content_is_not_a_change(
    runner: VerifyRunner, calc: Path
) -> None:
    await runner.request(wait=True)
    path = calc / "src/calc/text.py"
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    runner.mark_changed(["src/calc/text.py"])
    assert (await runner.status()).green


async def test_a_write_during_the_run_makes_the_result_stale_on_arrival(
    runner: VerifyRunner, ladder: FakeLadder, calc: Path, bus: InMemoryEventBus
) -> None:
    ladder.during = {"compile.project": calc / "src/calc/arith.py"}
    recorder = EventRecorder(bus)
    ticket = await runner.request(wait=True)
    assert ticket.result is not None
    assert ticket.result.state == "stale"
    assert ticket.result.verified_state == "green"
    assert ticket.result.changed == ["src/calc/arith.py"]
    stale = await recorder.wait_for("verify.epoch.stale")
    assert stale.data["phase"] == "on arrival"
    finished = await recorder.wait_for("verify.epoch.finished")
    assert finished.data["state"] == "stale"


async def test_a_commit_of_the_verified_change_keeps_it_green(
    runner: VerifyRunner, calc: Path
) -> None:
    await runner.request(wait=True)
    for args in (["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=calc, check=True
        )
    status = await runner.status()
    assert status.epoch is not None
    assert status.current_snapshot != status.epoch.snapshot
    assert status.green
    _append(calc / "src/calc/text.py", "W = 4\n")
    assert (await runner.status()).changed == ["src/calc/text.py"]


async def test_progress_reports_each_rung_and_ends_complete(runner: VerifyRunner) -> None:
    seen: list[tuple[float, float | None, str]] = []

    async def progress(done: float, total: float | None, message: str) -> None:
        seen.append((done, total, message))

    await runner.request(wait=True, progress=progress)
    dones = [d for d, _, _ in seen]
    assert dones == sorted(dones)
    assert seen[-1][0] == seen[-1][1] == 3.0


async def test_a_file_outside_the_project_is_refused_at_request_time(
    runner: VerifyRunner, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(UsageError, match="not inside the project"):
        await runner.request(LadderRequest(files=[str(outside)]))


async def test_a_file_that_does_not_exist_is_refused_naming_it_and_a_deleted_one_is_not(
    runner: VerifyRunner, calc: Path, ladder: FakeLadder
) -> None:
    with pytest.raises(UsageError, match=r"^src/calc/nope\.py does not exist") as refused:
        await runner.request(LadderRequest(files=["src/calc/nope.py"]))
    assert refused.value.field == "files"  # each adapter names it its own way
    assert ladder.calls == []
    (calc / "src/calc/arith.py").unlink()  # deleted since HEAD: a real change
    await runner.request(LadderRequest(files=["src/calc/arith.py"]), wait=True)
    assert [call.files for call in ladder.calls] == [["src/calc/arith.py"]]


async def test_a_run_cancelled_before_its_snapshot_never_says_on_none(
    timed_runner: VerifyRunner, calc: Path
) -> None:
    await timed_runner.request(LadderRequest(policy="minimal"))
    view = await timed_runner.cancel()
    assert view is not None
    assert view.snapshot is None
    text = epoch_summary(epoch_report(view, calc))
    assert text.startswith(f"cancelled before it took a snapshot: epoch {view.epoch}")
    assert "None" not in text
    assert "None" not in summary(view)


async def test_the_status_of_an_unknown_task_names_it(runner: VerifyRunner) -> None:
    with pytest.raises(NotFoundError, match="v000"):
        await runner.status("v000")
    status = await runner.status()
    assert status.epoch is None
    assert not status.green
    assert status.summary == "never verified: run verify"


async def test_without_a_watcher_a_status_still_finds_the_tree_moved(
    calc: Path, ladder: FakeLadder, bus: InMemoryEventBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_watch(self: object, **_: object) -> None:
        raise OSError("OS file watch limit reached")

    monkeypatch.setattr("agent_habitat.verify.runner.watch.ProjectWatcher.run", no_watch)
    recorder = EventRecorder(bus)
    config = RunnerConfig(coalesce_seconds=0)
    async with VerifyRunner.open(calc, bus=bus, config=config, ladder=ladder) as runner:
        assert not runner.watching
        failed = await recorder.wait_for("verify.watch.failed")
        assert "watch limit" in failed.data["error"]
        await runner.request(wait=True)
        assert (await runner.status()).green
        _append(calc / "src/calc/arith.py", "Y = 2\n")
        status = await runner.status()
        assert status.stale
        assert status.changed == ["src/calc/arith.py"]
        assert not status.green


async def test_a_red_epoch_summary_names_the_rung_and_why(
    runner: VerifyRunner, ladder: FakeLadder
) -> None:
    ladder.states = {"compile.project": "red"}
    await runner.request(wait=True)
    status = await runner.status()
    assert not status.green
    assert status.summary.startswith("red on ")
    assert status.summary.endswith("; compile.project red: compile.project found defects")


async def test_an_editor_s_temp_file_reported_mid_climb_and_gone_is_no_change(
    timed_runner: VerifyRunner, ladder: FakeLadder, bus: InMemoryEventBus, calc: Path
) -> None:
    # `sed -i` writes `sedXXXXXX` beside the file and renames it over it. On parse 1.20 the
    # watcher reported it once the climb had begun: "sedYUu3eq changed while it ran".
    temp = calc / "src/calc/sedYUu3eq"
    temp.write_text("X = 5\n", encoding="utf-8")
    temp.replace(calc / "src/calc/text.py")
    ladder.held = {"diagnose.files"}
    recorder = EventRecorder(bus)
    ticket = await timed_runner.request(LadderRequest(policy="minimal"))
    rung = f"{ticket.task}.diagnose.files"
    await recorder.wait_for("environment.task.started", where=lambda e: e.task == rung)
    timed_runner.mark_changed(["src/calc/sedYUu3eq", "src/calc/text.py"])
    ladder.release["diagnose.files"].set()
    epoch = await timed_runner.wait(ticket.task)
    assert (epoch.state, epoch.changed) == ("green", [])


async def test_a_committed_file_deleted_mid_climb_makes_it_stale(
    timed_runner: VerifyRunner, ladder: FakeLadder, bus: InMemoryEventBus, calc: Path
) -> None:
    (calc / "src/calc/text.py").write_text("X = 6\n", encoding="utf-8")
    ladder.held = {"diagnose.files"}
    recorder = EventRecorder(bus)
    ticket = await timed_runner.request(LadderRequest(policy="minimal"))
    rung = f"{ticket.task}.diagnose.files"
    await recorder.wait_for("environment.task.started", where=lambda e: e.task == rung)
    (calc / "src/calc/arith.py").unlink()  # clean at the snapshot, gone now
    timed_runner.mark_changed(["src/calc/arith.py"])
    ladder.release["diagnose.files"].set()
    epoch = await timed_runner.wait(ticket.task)
    assert (epoch.state, epoch.changed) == ("stale", ["src/calc/arith.py"])


class _Gate:
    """A warm-up whose start is `climbable`; its steps have ended."""

    def __init__(self, climbable: Callable[[], Awaitable[None]]) -> None:
        self._climbable = climbable

    async def climbable(self) -> None:
        await self._climbable()

    def ended(self, step: str) -> bool:
        return True

    def running(self, step: str) -> bool:
        return False

    async def ready(self, step: str) -> None:
        return None


async def test_a_clean_tree_is_nothing_to_verify_without_waiting_for_the_warm_up(
    runner: VerifyRunner, calc: Path
) -> None:
    # tabulate 0.9, a fresh host: the first verify, on a clean tree, waited 10.2 s for the
    # warm-up (dmypy, HEAD's lint baseline, the warm pytest) to answer "nothing to verify".
    warmed = anyio.Event()
    waited: list[str] = []

    async def warm_up() -> None:
        waited.append("warm-up")
        await warmed.wait()

    runner.warm = _Gate(warm_up)
    subprocess.run(["git", "checkout", "."], cwd=calc, check=True, capture_output=True)
    clean = await runner.request()
    with anyio.fail_after(10):
        await runner.wait(clean.task)
    assert waited == []
    _append(calc / "src/calc/text.py", "X = 2\n")
    changed = await runner.request()
    with anyio.fail_after(10):
        while not waited:  # the climb of a real change waits for the warm-up
            await anyio.lowlevel.checkpoint()
    warmed.set()
    with anyio.fail_after(10):
        epoch = await runner.wait(changed.task)
    assert epoch.state == "green"
