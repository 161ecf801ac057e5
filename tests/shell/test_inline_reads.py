"""Small spool reads stay on the event loop; big ones and patterns go to a worker thread.

Issue 23 ("Under load"): with 8 loud tabs and 20 callers, every `shell_last` with a line
window and every scene with a changed preview handed its read to a worker thread, and each
hand-off cost two wakeups that a loaded machine makes milliseconds long. A read that is
small by construction (a few lines, a few KiB a preview) is done where its caller is; the
answer is the same either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_habitat.shell import Shell
from agent_habitat.shell.models import LastArgs, RunArgs
from agent_habitat.shell.output import INLINE_READ_BYTES, read_lines_inline, read_lines_window
from agent_habitat.shell.scene import SharedBuild
from agent_habitat.testing import FakeSpawner, Script


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lengths=st.lists(st.integers(0, 3000), min_size=0, max_size=120),
    heads=st.one_of(st.none(), st.integers(1, 40)),
    tails=st.one_of(st.none(), st.integers(1, 150)),
)
def test_an_inline_line_window_is_the_window_a_worker_reads(
    tmp_path: Path, lengths: list[int], heads: int | None, tails: int | None
) -> None:
    """Lines of many lengths, so a tail crosses the pieces a read from the end grows by."""
    spool = tmp_path / "out"
    spool.write_bytes(b"".join(b"%d:" % i + b"x" * n + b"\n" for i, n in enumerate(lengths)))
    if heads is None and tails is None:
        tails = 1
    inline = read_lines_inline(spool, 1 << 20, head_lines=heads, tail_lines=tails)
    assert inline == read_lines_window(spool, 1 << 20, head_lines=heads, tail_lines=tails)


def test_a_window_of_many_lines_or_many_bytes_is_left_to_a_worker(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"y\n" * 100_000)
    assert read_lines_inline(spool, 1 << 20, head_lines=None, tail_lines=20) is not None
    assert read_lines_inline(spool, 1 << 20, head_lines=None, tail_lines=5000) is None
    long_lines = tmp_path / "long"
    long_lines.write_bytes((b"z" * 60_000 + b"\n") * 40)
    assert 20 * 60_000 > INLINE_READ_BYTES
    assert read_lines_inline(long_lines, 1 << 22, head_lines=None, tail_lines=20) is None
    assert read_lines_window(long_lines, 1 << 22, tail_lines=20).text.count("\n") == 20


@pytest.mark.anyio
@pytest.mark.finding("under-load")
async def test_a_tail_and_a_scene_of_loud_tabs_use_no_worker_thread(
    habitat: Shell, spawner: FakeSpawner, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawner.scripts["yes"] = Script(output="y\n" * 50_000, keep_running=True)
    for tab in ("a", "b"):
        await habitat.run(RunArgs(command="yes", tab=tab, background=True))

    real = anyio.to_thread.run_sync

    async def no_thread(func: Any, *args: Any, **kwargs: Any) -> Any:
        # The spawner's own work is no read: a run still going after 0.5 s is lowered in a
        # thread (shell/long_runs.py), which a loaded machine reaches while the test reads
        # (an error in a `make security` run at load 20).
        if getattr(func, "__self__", None) is spawner:
            return await real(func, *args, **kwargs)
        raise AssertionError("a small read went to a worker thread")

    # `shell.views` and `shell.scene` look `anyio.to_thread.run_sync` up at each call.
    monkeypatch.setattr(anyio.to_thread, "run_sync", no_thread)
    last = await habitat.last(LastArgs(tab="a", tail_lines=3))
    assert last.output == "y\n" * 3
    tabs = (await habitat.scene()).tabs
    assert [t.preview.endswith("y\n") for t in tabs] == [True, True]


@pytest.mark.anyio
@pytest.mark.finding("under-load")
async def test_callers_that_came_before_a_build_began_share_it() -> None:
    builds: list[int] = []

    async def build() -> int:
        builds.append(len(builds))
        return len(builds)

    got: list[int] = []
    async with anyio.create_task_group() as tg:
        shared = SharedBuild(tg, build)

        async def caller() -> None:
            got.append(await shared.get())

        async with anyio.create_task_group() as callers:
            for _ in range(20):
                callers.start_soon(caller)
    assert (builds, got) == ([0], [1] * 20)


@pytest.mark.anyio
async def test_a_caller_that_came_during_a_build_gets_the_next_one() -> None:
    started, release = anyio.Event(), anyio.Event()
    builds: list[int] = []

    async def build() -> int:
        builds.append(len(builds))
        if len(builds) == 1:
            started.set()
            await release.wait()
        return len(builds)

    async with anyio.create_task_group() as tg:
        shared = SharedBuild(tg, build)
        got: list[int] = []

        async def caller() -> None:
            got.append(await shared.get())

        with anyio.fail_after(10):
            async with anyio.create_task_group() as callers:
                callers.start_soon(caller)
                await started.wait()
                callers.start_soon(caller)
                await anyio.wait_all_tasks_blocked()
                release.set()
    assert sorted(got) == [1, 2]
