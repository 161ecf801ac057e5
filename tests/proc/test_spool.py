from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_habitat.proc import spool as spool_module
from agent_habitat.proc.spool import Spool
from agent_habitat.testing.clock import settle


def test_a_missing_spool_reads_as_empty(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "absent")
    assert (spool.size(), spool.read(0, 10), spool.head(5), spool.tail(5)) == (0, b"", b"", b"")
    assert list(spool.lines()) == []


def test_reads_are_bounded_ranges(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"0123456789")
    spool = Spool(path)
    assert (spool.read(3, 4), spool.head(2), spool.tail(3), spool.tail(99)) == (
        b"3456",
        b"01",
        b"789",
        b"0123456789",
    )
    assert spool.read(8, 100) == b"89"
    assert spool.read(4, 0) == b""


def test_lines_come_from_an_offset_and_a_long_line_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"one\ntwo\n" + b"x" * 10 + b"\nlast")
    assert list(Spool(path).lines(4, max_line_bytes=4)) == [
        b"two\n",
        b"xxxx",
        b"xxxx",
        b"xx\n",
        b"last",
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "polling"])
async def test_growth_wakes_on_a_write_made_after_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool
) -> None:
    if not inotify:
        monkeypatch.setattr(spool_module, "_libc", lambda: None)
    path = tmp_path / "out"
    path.write_bytes(b"before\n")
    woke = anyio.Event()
    async with Spool(path).growth() as growth, anyio.create_task_group() as tg:

        async def watch() -> None:
            await growth.wait()
            woke.set()

        tg.start_soon(watch)
        await settle()
        assert not woke.is_set()
        with path.open("ab") as f:
            f.write(b"after\n")
        with anyio.fail_after(5):
            await woke.wait()
