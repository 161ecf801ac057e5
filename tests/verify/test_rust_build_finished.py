"""When HEAD's test build may start beside the tests (toolchains/rust/spool_watch.py `said`): once
cargo's JSON says its build succeeded, or once the tests' runs ended without saying so."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_habitat.verify.toolchains.rust.spool_watch import BUILD_SUCCEEDED, said

pytestmark = pytest.mark.anyio

_FINISHED = '{"reason":"build-finished","success":true}\n'


async def test_it_waits_for_the_build_finished_message_even_split_across_writes(
    tmp_path: Path,
) -> None:
    spool = tmp_path / "t.out"
    ended, returned = anyio.Event(), anyio.Event()

    async def wait() -> None:
        assert await said(spool, BUILD_SUCCEEDED, ended)
        returned.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        spool.write_text('{"reason":"compiler-artifact"}\n', encoding="utf-8")
        with anyio.move_on_after(0.3):
            await returned.wait()
        assert not returned.is_set()  # the build is still under way
        with spool.open("a", encoding="utf-8") as f:
            f.write(_FINISHED[:12])
        with anyio.move_on_after(0.3):
            await returned.wait()
        assert not returned.is_set()
        with spool.open("a", encoding="utf-8") as f:
            f.write(_FINISHED[12:])
        with anyio.fail_after(10):
            await returned.wait()


async def test_it_returns_once_the_runs_ended_without_the_message(tmp_path: Path) -> None:
    ended = anyio.Event()
    ended.set()
    with anyio.fail_after(10):
        assert not await said(tmp_path / "never-written.out", BUILD_SUCCEEDED, ended)
