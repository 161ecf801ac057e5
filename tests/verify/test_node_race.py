"""A check while the warm-up still starts the warm checker (toolchains/node/race.py): the
tool's cold run goes at once beside the start, and the first answer is taken; the other is
cancelled. Fakes at the two seams (the warm check, the cold run), real announcements."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from agent_habitat.proc import ProcessRecord, is_alive, priority, process_create_time
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.node.race import warm_or_cold
from git_tree import commit_tree
from node_warm import rung_ctx

pytestmark = pytest.mark.anyio
_SLOT = "node:"


def _ctx(root: Path, *, server: bool = True) -> RungContext:
    commit_tree(root, {"package.json": "{}"})
    return rung_ctx(root, server=server)


async def test_the_cold_run_answers_while_the_start_is_under_way(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    asked: list[bool] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        asked.append(may_start)
        return "warm"

    async def cold() -> str:
        # The user waits on this run: the start stays background work meanwhile.
        assert (ctx.workspace.state_dir, _SLOT) not in warm_checker._hurried
        return "cold"

    notes: list[str] = []
    try:
        with anyio.fail_after(10):  # the start never ends here: the cold run must not wait
            answer = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, notes)
    finally:
        warm_checker.settle(ctx.workspace, _SLOT)
    assert answer == ("cold", False)
    assert asked == []  # the warm side was still waiting for the start
    assert notes == [
        "tsc: the warm-up was still starting its warm checker (background priority); tsc ran "
        "cold beside it, and the cold run answered first",
        # Announced, not begun (the warm-up waits for verifies to end): it will not be
        # background work when it begins.
        "tsc: its warm checker's start will begin at normal priority, once the cold run "
        "answered, for the next verify",
    ]


async def test_the_warm_checker_answers_once_started_and_the_cold_run_is_cancelled(
    tmp_path: Path,
) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    cancelled = anyio.Event()
    asked: list[bool] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        asked.append(may_start)
        notes.append("tsc: the warm checker checked the change")
        return "warm"

    async def cold() -> str:
        warm_checker.settle(ctx.workspace, _SLOT)  # the start ends while the cold one runs
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "cold"

    notes: list[str] = []
    with anyio.fail_after(10):
        answer = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, notes)
    assert answer == ("warm", True)
    assert cancelled.is_set()
    assert asked == [False]  # never a start of its own: the warm-up's ended
    assert notes[0] == "tsc: the warm checker checked the change"
    assert notes[1].endswith("and its warm start answered first")


async def test_a_start_that_failed_leaves_the_cold_answer(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    went = anyio.Event()

    async def warm(notes: list[str], may_start: bool) -> str | None:
        went.set()
        return None  # no server after the start: nothing warm to ask

    async def cold() -> str:
        warm_checker.settle(ctx.workspace, _SLOT)
        await went.wait()
        return "cold"

    with anyio.fail_after(10):
        answer = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, [])
    assert answer == ("cold", False)


@pytest.mark.parametrize("server", [True, False])
async def test_with_no_start_announced_the_warm_checker_goes_first(
    tmp_path: Path, server: bool
) -> None:
    # No warm-up under way (a later verify; a one-shot has no warm-up at all): as before.
    ctx = _ctx(tmp_path, server=server)
    order: list[str] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        order.append(f"warm {may_start}")
        return None

    async def cold() -> str:
        order.append("cold")
        return "cold"

    assert await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, []) == ("cold", False)
    assert order == ["warm True", "cold"]


def test_a_verify_that_waits_on_a_start_puts_its_priority_back(tmp_path: Path) -> None:
    # The warm-up's start runs at background priority; at load 18 defu's warm tsc took 167 s
    # to its first answer, past every verify of the run. A verify that races it makes it the
    # user's: a real process in a session of its own, its group's nice put back.
    ctx = _ctx(tmp_path)
    spec = warm_checker.ServerSpec(tool="sleep", argv=["sleep", "30"], env={}, slot=_SLOT)
    warm = warm_checker.WarmChecker(ctx.workspace, tmp_path, spec, "k")
    warm.background = True
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    path = f"/proc/{proc.pid}/autogroup"
    before = priority._autogroup(path)
    try:
        warm.priority, warm._put_back = priority.background_for_now(proc.pid, 10)
        warm_checker._starting[(ctx.workspace.state_dir, _SLOT)] = warm
        said = warm_checker.hurry(ctx.workspace, _SLOT)
        if before is not None and before[1] < 10:
            assert said == "put back to normal priority"
            assert priority._autogroup(path) == before
            assert warm.priority.endswith("put back when a verify asked for it")
        else:  # no autogroups: the process's own nice cannot be raised again
            assert said in (f"left at {warm.priority}", "") or ours >= 10
        assert warm_checker.hurry(ctx.workspace, _SLOT) == ""  # once
    finally:
        warm_checker._starting.pop((ctx.workspace.state_dir, _SLOT), None)
        proc.kill()
        proc.wait()


async def test_a_start_a_verify_asked_for_before_it_began_is_not_background(
    tmp_path: Path,
) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    assert warm_checker.hurry(ctx.workspace, _SLOT) == "will begin at normal priority"
    began: list[bool] = []

    class Probe(warm_checker.WarmChecker):
        def start(self) -> None:
            began.append(self.background)
            raise OSError("not a server")

    spec = warm_checker.ServerSpec(tool="probe", argv=["true"], env={}, slot=_SLOT)
    warm, _ = await warm_checker.start(
        ctx.workspace, tmp_path, spec, "k", make=Probe, background=True
    )
    assert warm is None
    assert began == [False]
    # The next start the warm-up makes is background again.
    warm_checker.announce(ctx.workspace, _SLOT)
    await warm_checker.start(ctx.workspace, tmp_path, spec, "k", make=Probe, background=True)
    assert began == [False, True]


def _ended_leader(tmp_path: Path) -> tuple[ProcessRecord, ProcessRecord]:
    """A session leader that has exited, and the child it left running in its session."""
    pidfile = tmp_path / "child.pid"
    script = f'sleep 300 & echo $! > "{pidfile}.tmp"; mv "{pidfile}.tmp" "{pidfile}"'
    leader = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    created = process_create_time(leader.pid) or 0.0
    leader.wait(timeout=60)
    return ProcessRecord(leader.pid, created), ProcessRecord(int(pidfile.read_text()), 0.0)


async def test_stopping_a_server_that_has_ended_still_stops_what_it_started(
    tmp_path: Path,
) -> None:
    # The warm Node servers exit when their stdin closes, which `stop` does first; jest's
    # workers, running a test the verify stopped, then outlived the warm jest whenever it had
    # exited before `stop` looked (a loaded fresh-clone CI at f66e067).
    ctx = _ctx(tmp_path)
    spec = warm_checker.ServerSpec(tool="probe", argv=["true"], env={}, slot=_SLOT)
    warm = warm_checker.WarmChecker(ctx.workspace, tmp_path, spec, "k")
    leader, child = _ended_leader(tmp_path)
    try:
        assert is_alive(child)
        warm.record = leader
        await warm.stop()
        assert not is_alive(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)


async def test_a_check_that_is_the_start_waits_for_it_made_the_users(tmp_path: Path) -> None:
    # tsc's start is its first full check: a cold tsc beside it did the same work again on
    # the same cores (ms 3.0.0: the first verify's cold tsc 103 s, over its 89 s suite).
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    asked: list[bool] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        asked.append(may_start)
        notes.append("tsc: the warm checker checked the change")
        return "warm"

    async def cold() -> str:
        raise AssertionError("no cold run while the start that answers is under way")

    async def start_ends() -> None:
        # The verify made the start the user's before it waited.
        assert (ctx.workspace.state_dir, _SLOT) in warm_checker._hurried
        warm_checker.settle(ctx.workspace, _SLOT)

    notes: list[str] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            result: list[tuple[str, bool]] = []

            async def climb() -> None:
                got = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, notes, wait_for_start=True)
                result.append(got)

            tg.start_soon(climb)
            await anyio.wait_all_tasks_blocked()
            assert asked == []  # waiting for the start, not asking the warm checker yet
            await start_ends()
    assert result == [("warm", True)]
    assert asked == [False]
    assert notes[0] == "tsc: the warm checker checked the change"
    assert "the verify waited for that start (will begin at normal priority)" in notes[1]


async def test_a_start_it_waited_for_that_gave_no_checker_leaves_the_cold_run(
    tmp_path: Path,
) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)

    async def warm(notes: list[str], may_start: bool) -> str | None:
        return None

    async def cold() -> str:
        return "cold"

    notes: list[str] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            result: list[tuple[str, bool]] = []

            async def climb() -> None:
                got = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, notes, wait_for_start=True)
                result.append(got)

            tg.start_soon(climb)
            await anyio.wait_all_tasks_blocked()
            warm_checker.settle(ctx.workspace, _SLOT)
    assert result == [("cold", False)]
    assert notes[-1].startswith("tsc: the warm-up's start of its warm checker gave none")
