"""A rung process's spool keeps to the shell's budgets: its head and tail are read back as
they were written, its middle is counted, and its disk use stays near the budget."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from agent_habitat.proc.keepers import keeper_alive
from agent_habitat.proc.spool import Spool
from agent_habitat.proc.spool_keeper import Budget
from agent_habitat.testing import eventually
from agent_habitat.verify import command
from agent_habitat.verify.command import child_env, run_command, spool_path
from small_disks import tmpfs

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="keepers are Linux only"),
]

_MIB = 1 << 20


def on_disk(path: Path) -> int:
    return path.stat().st_blocks * 512


def loud(mib: int) -> list[str]:
    """A rung command that prints `mib` MiB, then a last line."""
    body = (
        "import sys\nw = sys.stdout.buffer\n"
        f"for _ in range({mib}):\n    w.write(b'x' * 1048575 + b'\\n')\n"
        "w.write(b'THE END\\n')\n"
    )
    return [sys.executable, "-c", body]


@pytest.mark.parametrize("mib", [3, 96])
async def test_a_loud_rung_keeps_its_spool_within_the_budget(tmp_path: Path, mib: int) -> None:
    spool = spool_path(tmp_path / "spool", "v1.test.full.out")
    budget = Budget(_MIB, 64 * _MIB)
    outcome = await run_command(
        loud(mib),
        cwd=tmp_path,
        env=child_env(),
        spool=spool,
        limit_s=300,
        cap=4096,
        budget=budget,
    )
    assert outcome.exit_code == 0
    assert outcome.tail.endswith("THE END\n")
    assert outcome.text.startswith("x" * 1000)
    # The keeper may start after the command's end (a quick loud one): wait for its cut.
    await eventually(lambda: on_disk(spool) <= 2 * budget.run_bytes, within=60)
    await eventually(lambda: not keeper_alive(spool), within=60)
    assert Spool(spool).size() == mib * _MIB + len(b"THE END\n")  # the middle is counted
    assert on_disk(spool) <= 2 * budget.run_bytes


async def test_without_a_budget_the_spool_is_whole(tmp_path: Path) -> None:
    spool = spool_path(tmp_path / "spool", "v1.lint.out")
    outcome = await run_command(
        loud(3), cwd=tmp_path, env=child_env(), spool=spool, limit_s=300, cap=4096
    )
    assert outcome.exit_code == 0
    assert not keeper_alive(spool)
    assert on_disk(spool) >= 3 * _MIB


async def test_a_loud_rung_on_a_short_disk_is_pumped_and_ends_whole(tmp_path: Path) -> None:
    # 96 MiB into a 16 MiB disk: the keeper starts first and pumps the rung's output, so the
    # rung never meets a full disk, and its last line is in the spool when it is read.
    with tmpfs(tmp_path / "tiny", "16m") as disk:
        spool = spool_path(disk / "spool", "v1.test.full.out")
        outcome = await run_command(
            loud(96),
            cwd=tmp_path,
            env=child_env(),
            spool=spool,
            limit_s=300,
            cap=4096,
            budget=Budget(256 * _MIB, 2048 * _MIB),
        )
        assert outcome.exit_code == 0
        assert outcome.tail.endswith("THE END\n")
        assert Spool(spool).size() == 96 * _MIB + len(b"THE END\n")
        assert not keeper_alive(spool)  # the drain waited for the pump's end


class _HeldKeeper:
    """`start_keeper` for the seam: records the call and returns only once released."""

    def __init__(self) -> None:
        self.called = threading.Event()
        self.release = threading.Event()

    def __call__(self, output: Path, budget: Budget) -> bool:
        self.called.set()
        assert self.release.wait(60), "never released"
        return True


async def test_a_run_ending_while_its_keeper_starts_is_answered_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keeper's start (an interpreter) runs beside the wait: a run that wrote enough to
    get one, but less than half its budget, is not held up until its keeper has started."""
    held = _HeldKeeper()
    monkeypatch.setattr(command, "start_keeper", held)
    # A quarter of its budget written, then it ends only once its keeper is being started.
    flag = tmp_path / "keeper-called"
    wait = (
        "import os, sys, time\nsys.stdout.buffer.write(b'x' * (1 << 18) + b'\\n')\n"
        "sys.stdout.flush()\n"
        f"while not os.path.exists({str(flag)!r}): time.sleep(0.01)\n"
    )

    async def mark() -> None:
        await anyio.to_thread.run_sync(held.called.wait, 60)
        flag.touch()

    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(mark)
                outcome = await run_command(
                    [sys.executable, "-c", wait + "print('done')"],
                    cwd=tmp_path,
                    env=child_env(),
                    spool=spool_path(tmp_path / "spool", "v1.lint.out"),
                    limit_s=60,
                    cap=4096,
                    budget=Budget(_MIB, 64 * _MIB),
                )
        assert not held.release.is_set()  # answered while the keeper was still starting
        assert outcome.exit_code == 0
        assert outcome.tail.endswith("\ndone\n")
    finally:
        held.release.set()


async def test_a_quiet_run_gets_no_keeper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that writes little (a linter on one file) never pays for a keeper's interpreter,
    however long it lasts: its spool is looked at, not held."""
    calls: list[Path] = []
    monkeypatch.setattr(command, "start_keeper", lambda output, budget: calls.append(output))
    monkeypatch.setattr(command, "KEEPER_AFTER_SECONDS", 0.01)
    # Runs until its spool has been looked at several times (the flag: the 5th look).
    flag = tmp_path / "looked"
    looks = 0
    size = Spool.size

    def counted(self: Spool) -> int:
        nonlocal looks
        looks += 1
        if looks == 5:
            flag.touch()
        return size(self)

    monkeypatch.setattr(Spool, "size", counted)
    wait = f"import os, time\nwhile not os.path.exists({str(flag)!r}): time.sleep(0.01)\n"
    with anyio.fail_after(60):
        outcome = await run_command(
            [sys.executable, "-c", wait + "print('done')"],
            cwd=tmp_path,
            env=child_env(),
            spool=spool_path(tmp_path / "spool", "v1.lint.out"),
            limit_s=60,
            cap=4096,
            budget=Budget(_MIB, 64 * _MIB),
        )
    assert outcome.exit_code == 0
    assert outcome.tail == "done\n"
    assert calls == []


async def test_a_run_past_half_its_budget_waits_for_its_keeper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that wrote more than half its budget is cut by its keeper before it is read."""
    held = _HeldKeeper()
    monkeypatch.setattr(command, "start_keeper", held)
    flag = tmp_path / "keeper-called"
    body = (
        "import os, sys, time\nsys.stdout.buffer.write(b'x' * (1 << 20))\nsys.stdout.flush()\n"
        f"while not os.path.exists({str(flag)!r}): time.sleep(0.01)\n"
    )
    returned = anyio.Event()

    async def release_once_called() -> None:
        await anyio.to_thread.run_sync(held.called.wait, 60)
        flag.touch()
        # The run ends now; its answer must wait for the keeper held here.
        await anyio.to_thread.run_sync(lambda: None)
        assert not returned.is_set()
        held.release.set()

    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(release_once_called)
                outcome = await run_command(
                    [sys.executable, "-c", body],
                    cwd=tmp_path,
                    env=child_env(),
                    spool=spool_path(tmp_path / "spool", "v1.test.full.out"),
                    limit_s=60,
                    cap=4096,
                    budget=Budget(_MIB, 64 * _MIB),
                )
                returned.set()
        assert held.release.is_set()
        assert outcome.exit_code == 0
    finally:
        held.release.set()
