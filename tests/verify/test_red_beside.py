"""The climb ends at the first red of a rung whose work runs beside the one it is at
(verify/ahead.py `RedBeside`): the verdict is red there, with its findings; the rungs still
running are stopped ("stopped: test.scoped is red"), never green; a red earlier rung still
stops the later ones. The Go toolchain's rung table with scripted rungs, one seam: which
rung ends first is decided by events, not by timing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.verify import LadderRequest, LadderResult, RungName, run_ladder
from agent_habitat.verify.models import Diagnostic, RungResult
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.base import Rung
from agent_habitat.verify.toolchains.go import rungs as go_rungs
from git_tree import commit_tree, write

pytestmark = pytest.mark.anyio

_A = "package a\n\nfunc Add(x, y int) int { return x + y }\n"


class _Script:
    """Rungs that end when told: `forever` ones run until cancelled (and say so)."""

    def __init__(self) -> None:
        self.cancelled: list[RungName] = []
        self.green_done = anyio.Event()

    def forever(self, rung: RungName) -> Rung:
        async def run(ctx: RungContext) -> RungResult:
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.append(rung)
            raise AssertionError("unreachable")

        return run

    def green(self, rung: RungName) -> Rung:
        async def run(ctx: RungContext) -> RungResult:
            self.green_done.set()
            return RungResult(rung=rung, task=ctx.task(rung), state="green", tool="fake")

        return run

    def red(self, rung: RungName, after: anyio.Event | None = None) -> Rung:
        async def run(ctx: RungContext) -> RungResult:
            if after is not None:
                await after.wait()
            found = Diagnostic(file="a/a.go", line=3, code="compile", message="x unused")
            return RungResult(
                rung=rung, task=ctx.task(rung), state="red", tool="fake", diagnostics=[found]
            )

        return run


async def _climb(root: Path, events: list[Event]) -> LadderResult:
    bus = InMemoryEventBus(str(root))
    bus.subscribe(events.append)
    with anyio.fail_after(30):  # a climb that waits on the endless rung never ends
        return await run_ladder(root, LadderRequest(policy="standard"), bus=bus)


def _module(root: Path) -> Path:
    commit_tree(root, {"go.mod": "module example.com/m\n\ngo 1.21\n", "a/a.go": _A})
    write(root, "a/a.go", _A.replace("x + y", "x - y"))
    return root


async def test_a_red_test_rung_ends_the_climb_while_the_lint_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _Script()
    monkeypatch.setitem(go_rungs.RUNNERS, "diagnose.files", script.forever("diagnose.files"))
    monkeypatch.setitem(go_rungs.RUNNERS, "compile.project", script.forever("compile.project"))
    monkeypatch.setitem(go_rungs.RUNNERS, "test.scoped", script.red("test.scoped"))
    events: list[Event] = []
    result = await _climb(_module(tmp_path), events)
    assert [(r.rung, r.state, r.reason) for r in result.rungs] == [
        ("diagnose.files", "cancelled", "stopped: test.scoped is red"),
        ("compile.project", "cancelled", "stopped: test.scoped is red"),
        ("test.scoped", "red", None),
    ], result
    assert [r.stopped_by for r in result.rungs] == ["test.scoped", "test.scoped", None]
    assert result.state == "red"
    assert result.rungs[2].new_findings == 1
    assert sorted(script.cancelled) == ["compile.project", "diagnose.files"]
    kinds = [(e.kind.rsplit(".", 1)[-1], e.data["rung"]) for e in events if "rung" in e.data]
    assert kinds == [
        ("started", "diagnose.files"),
        ("cancelled", "diagnose.files"),
        ("started", "compile.project"),
        ("cancelled", "compile.project"),
        ("started", "test.scoped"),
        ("failed", "test.scoped"),
    ]
    assert sum(r.climb_s for r in result.rungs) <= result.duration_s


async def test_a_rung_between_that_ended_green_reports_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _Script()
    monkeypatch.setitem(go_rungs.RUNNERS, "diagnose.files", script.forever("diagnose.files"))
    monkeypatch.setitem(go_rungs.RUNNERS, "compile.project", script.green("compile.project"))
    monkeypatch.setitem(
        go_rungs.RUNNERS, "test.scoped", script.red("test.scoped", after=script.green_done)
    )
    result = await _climb(_module(tmp_path), [])
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "cancelled"),
        ("compile.project", "green"),
        ("test.scoped", "red"),
    ], result
    assert result.state == "red"


async def test_a_red_lint_still_stops_the_rungs_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _Script()
    monkeypatch.setitem(go_rungs.RUNNERS, "diagnose.files", script.red("diagnose.files"))
    monkeypatch.setitem(go_rungs.RUNNERS, "compile.project", script.forever("compile.project"))
    monkeypatch.setitem(go_rungs.RUNNERS, "test.scoped", script.forever("test.scoped"))
    result = await _climb(_module(tmp_path), [])
    assert [(r.rung, r.state, r.reason) for r in result.rungs] == [
        ("diagnose.files", "red", None),
        ("compile.project", "skipped", "not reached: diagnose.files is red"),
        ("test.scoped", "skipped", "not reached: diagnose.files is red"),
    ], result
    assert result.state == "red"
    assert sorted(script.cancelled) == ["compile.project", "test.scoped"]


def _alive(pid: int) -> bool:
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


async def test_the_stopped_rungs_process_is_signalled_and_reaped_after_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lint's process ignores SIGTERM (so only the kill's SIGKILL, after the grace, ends
    # it). The verdict does not wait for that kill (verify/stopping.py): run_ladder returns
    # red with the process still there, and the clean-up it hands to its caller (`after`)
    # ends it. Without a caller to take it, run_ladder ends it before returning.
    from agent_habitat.proc import kill

    monkeypatch.setattr(kill.DEFAULT_POLICY, "grace_seconds", 0.3)
    pidfile = tmp_path / "lint.pid"

    async def lint(ctx: RungContext) -> RungResult:
        script = f'trap "" TERM; echo $$ > "{pidfile}.tmp"; mv "{pidfile}.tmp" "{pidfile}"; '
        await ctx.run("diagnose.files", ["sh", "-c", script + "exec sleep 60"])
        raise AssertionError("the lint's process ends only when killed")

    async def red(ctx: RungContext) -> RungResult:
        while not pidfile.exists():  # the lint's process is up (bounded by _climb's 30 s)
            await anyio.sleep(0.01)
        return await _Script().red("test.scoped")(ctx)

    monkeypatch.setitem(go_rungs.RUNNERS, "diagnose.files", lint)
    monkeypatch.setitem(go_rungs.RUNNERS, "compile.project", _Script().green("compile.project"))
    monkeypatch.setitem(go_rungs.RUNNERS, "test.scoped", red)
    root = _module(tmp_path / "m")
    after: list[Callable[[], Awaitable[None]]] = []
    with anyio.fail_after(30):
        result = await run_ladder(
            root, LadderRequest(policy="standard"), bus=InMemoryEventBus("t"), after=after
        )
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "cancelled"),
        ("compile.project", "green"),
        ("test.scoped", "red"),
    ], result
    pid = int(pidfile.read_text())
    assert _alive(pid), "the verdict waited for the stopped rung's kill"
    with anyio.fail_after(30):
        for clean_up in after:
            await clean_up()
    assert not _alive(pid)
    pidfile.unlink()
    with anyio.fail_after(30):
        await run_ladder(root, LadderRequest(policy="standard"), bus=InMemoryEventBus("t"))
    assert not _alive(int(pidfile.read_text()))


async def test_a_rung_that_decided_red_does_not_wait_for_the_kill_of_its_own_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lint decides red while its own process (which ignores SIGTERM) still runs, as
    # Rust's clippy rung does once the crates' check judged a compile error new: having said
    # so (stopping.ending_red), its own cancel of that process is reaped after the verdict.
    from agent_habitat.proc import kill
    from agent_habitat.verify.stopping import ending_red

    monkeypatch.setattr(kill.DEFAULT_POLICY, "grace_seconds", 0.3)
    pidfile = tmp_path / "lint.pid"

    async def lint(ctx: RungContext) -> RungResult:
        script = f'trap "" TERM; echo $$ > "{pidfile}.tmp"; mv "{pidfile}.tmp" "{pidfile}"; '
        async with anyio.create_task_group() as tg:
            tg.start_soon(ctx.run, "diagnose.files", ["sh", "-c", script + "exec sleep 60"])
            while not pidfile.exists():  # its process is up (bounded by the fail_after)
                await anyio.sleep(0.01)
            ending_red()
            tg.cancel_scope.cancel()
        return await _Script().red("diagnose.files")(ctx)

    monkeypatch.setitem(go_rungs.RUNNERS, "diagnose.files", lint)
    monkeypatch.setitem(go_rungs.RUNNERS, "test.scoped", _Script().forever("test.scoped"))
    root = _module(tmp_path / "m")
    after: list[Callable[[], Awaitable[None]]] = []
    with anyio.fail_after(30):
        result = await run_ladder(
            root, LadderRequest(policy="standard"), bus=InMemoryEventBus("t"), after=after
        )
    assert result.rungs[0].state == "red", result
    pid = int(pidfile.read_text())
    assert _alive(pid), "the verdict waited for the kill of the red rung's own work"
    with anyio.fail_after(30):
        for clean_up in after:
            await clean_up()
    assert not _alive(pid)
