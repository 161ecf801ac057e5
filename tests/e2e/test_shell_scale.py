"""Memory stays flat under big output (its peak, not only its end); tabs run in parallel."""

from __future__ import annotations

from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.shell import Shell
from agent_habitat.shell.models import RunArgs, RunResult
from shell_waits import await_file

pytestmark = pytest.mark.anyio


def _reset_peak_rss() -> None:
    """Linux: the process's peak RSS (VmHWM) starts again from its current RSS."""
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")


def _peak_rss() -> int:
    status = Path("/proc/self/status").read_text(encoding="ascii")
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(kib) * 1024


async def test_100_mb_of_output_keeps_memory_bounded(habitat: Shell) -> None:
    # The peak, not the end: a reader that held the whole output and freed it would pass
    # a before/after check. The kernel keeps the peak exactly; no sampling to miss it.
    me = psutil.Process()
    _reset_peak_rss()
    before = me.memory_info().rss
    result = await habitat.run(RunArgs(command="head -c 100000000 /dev/zero | tr '\\0' x"))
    grown = _peak_rss() - before
    assert result.exit_code == 0
    assert result.output_bytes == 100_000_000
    assert result.omitted_bytes >= 100_000_000 - habitat.config.output_cap_bytes
    assert len(result.output) < 2 * habitat.config.output_cap_bytes
    assert grown < 50 * 1024 * 1024, grown


async def test_two_tabs_run_in_parallel(habitat: Shell, tmp_path: Path) -> None:
    # Each run finishes only once the other has started; serialised, the first gives up (3).
    started = {tab: tmp_path / f"{tab}.started" for tab in ("a", "b")}
    results: dict[str, RunResult] = {}

    async def one(tab: str, other: str) -> None:
        command = f"touch {started[tab]}; {await_file(started[other])}; echo done"
        results[tab] = await habitat.run(RunArgs(command=command, tab=tab))

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "a", "b")
        tg.start_soon(one, "b", "a")
    assert {tab: (r.exit_code, r.output) for tab, r in results.items()} == {
        "a": (0, "done\n"),
        "b": (0, "done\n"),
    }


async def test_wait_finds_a_match_after_a_burst_larger_than_its_scan_chunk(
    habitat: Shell,
) -> None:
    from agent_habitat.shell.models import WaitArgs

    await habitat.run(
        RunArgs(
            command="head -c 3000000 /dev/zero | tr '\\0' y; echo; echo READY; sleep 30",
            tab="burst",
            background=True,
        )
    )
    result = await habitat.wait(WaitArgs(tab="burst", until="READY", timeout_seconds=20))
    assert (result.reason, result.match) == ("matched", "READY")
