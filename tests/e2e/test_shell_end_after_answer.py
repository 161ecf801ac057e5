"""A quick foreground run's end is written after its answer (`shell.end_record`): every
reader of this habitat process sees it recorded, what was answered is what is recorded,
and the lull writes it when nothing reads."""

from __future__ import annotations

import sqlite3

import pytest

from agent_habitat.shell import Shell
from agent_habitat.shell.models import HistoryArgs, LastArgs, RunArgs
from agent_habitat.testing import EventRecorder

pytestmark = pytest.mark.anyio


def _seen_elsewhere(habitat: Shell, index: int, tab: str) -> tuple[str, int | None]:
    """The run's row as another process reads it (its own connection)."""
    conn = sqlite3.connect(habitat.db.path)
    try:
        row = conn.execute(
            "SELECT state, exit_code FROM runs WHERE tab = ? AND idx = ?", (tab, index)
        ).fetchone()
    finally:
        conn.close()
    return row[0], row[1]


async def test_the_answer_comes_first_and_every_reader_here_sees_the_end(
    habitat: Shell,
) -> None:
    result = await habitat.run(RunArgs(command="echo out; exit 3", tab="q"))
    assert (result.state, result.exit_code, result.output) == ("exited", 3, "out\n")
    # Nothing awaited since the answer: its end is not written yet...
    assert _seen_elsewhere(habitat, result.index, "q") == ("running", None)
    # ...and the first read of this process writes it before reading.
    rows = (await habitat.history(HistoryArgs(tab="q"))).rows
    assert (rows[-1].state, rows[-1].exit_code) == ("exited", 3)
    assert rows[-1].duration_s == result.duration_s  # its end time is the answer's
    assert _seen_elsewhere(habitat, result.index, "q") == ("exited", 3)
    last = await habitat.last(LastArgs(tab="q"))
    assert (last.state, last.exit_code, last.output) == ("exited", 3, "out\n")


async def test_the_next_run_starts_where_the_last_one_left_off(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="cd / && export CARRIED=yes", tab="c"))
    result = await habitat.run(RunArgs(command='pwd; echo "[$CARRIED]"', tab="c"))
    assert result.output == "/\n[yes]\n"


async def test_with_nothing_reading_the_lull_writes_the_end_and_its_event(
    habitat: Shell,
) -> None:
    recorder = EventRecorder(habitat.bus)
    result = await habitat.run(RunArgs(command="exit 5", tab="l"))
    exited = await recorder.wait_for("shell.run.exited", where=lambda e: e.tab == "l")
    assert (exited.data["index"], exited.data["exit_code"]) == (result.index, 5)
    assert exited.data["duration_s"] == result.duration_s
    assert _seen_elsewhere(habitat, result.index, "l") == ("exited", 5)
    kinds = [e.kind for e in recorder.events if e.tab == "l"]
    assert kinds == ["shell.tab.opened", "shell.run.started", "shell.run.exited"]
    recorder.unsubscribe()
