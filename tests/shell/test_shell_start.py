"""Starting a run: its row and spool folder exist, committed, before its process does, so a
habitat that dies at any moment leaves nothing another habitat cannot see, and no id or
spool folder is ever used twice (issue 12, "spawn inside the transaction")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_habitat.errors import HabitatError
from agent_habitat.shell import Shell
from agent_habitat.shell.models import HistoryArgs, RunArgs
from agent_habitat.testing import FakeProcess, FakeSpawner, Script

from .conftest import OpenHabitat

pytestmark = pytest.mark.anyio


class _Died(BaseException):
    """The habitat process is gone (SIGKILL) right after the spawn."""


def _committed_runs(db_path: Path) -> list[tuple[int, str, str]]:
    # Another connection, read-only: it sees only what was committed.
    other = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = other.execute("SELECT id, state, run_dir FROM runs ORDER BY id").fetchall()
        return [(int(i), str(state), str(run_dir)) for i, state, run_dir in rows]
    finally:
        other.close()


async def test_the_row_and_spool_folder_exist_committed_before_the_process_starts(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    seen: list[tuple[list[tuple[int, str, str]], bool]] = []

    def look(output: Path) -> None:
        seen.append((_committed_runs(habitat.workspace.db_path), output.parent.is_dir()))

    spawner.before_spawn = look
    result = await habitat.run(RunArgs(command="true"))
    folder = str(Path(result.spool).parent)
    assert seen == [([(1, "running", folder)], True)]


async def test_a_habitat_dying_after_the_spawn_leaves_its_row_and_no_id_is_reused(
    open_habitat: OpenHabitat, spawner: FakeSpawner
) -> None:
    spawner.scripts["serve"] = Script(output="orphan output\n", keep_running=True)

    def die(process: FakeProcess) -> None:
        raise _Died

    spawner.after_spawn = die
    async with open_habitat() as first:
        with pytest.raises(_Died):
            await first.run(RunArgs(command="serve", tab="a", background=True))
    orphan = spawner.last
    spawner.after_spawn = None
    assert [(i, state) for i, state, _ in _committed_runs(first.workspace.db_path)] == [
        (1, "running")
    ]
    async with open_habitat() as second:
        result = await second.run(RunArgs(command="true", tab="b"))
    assert result.output == ""
    assert Path(result.spool).parent != orphan.output.parent
    assert orphan.output.read_text(encoding="utf-8") == "orphan output\n"


async def test_a_command_that_cannot_start_leaves_no_row_tab_or_index_behind(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    def refuse(output: Path) -> None:
        raise PermissionError(13, "Permission denied")

    spawner.before_spawn = refuse
    with pytest.raises(HabitatError, match=r"could not start .*Permission denied"):
        await habitat.run(RunArgs(command="true", tab="x"))
    assert (await habitat.scene()).tabs == []
    spawner.before_spawn = None
    first = await habitat.run(RunArgs(command="true", tab="x"))
    spawner.before_spawn = refuse
    with pytest.raises(HabitatError, match="could not start"):
        await habitat.run(RunArgs(command="true", tab="x"))
    spawner.before_spawn = None
    again = await habitat.run(RunArgs(command="true", tab="x"))
    assert (first.index, again.index) == (1, 2)
    assert [r.index for r in (await habitat.history(HistoryArgs(tab="x"))).rows] == [1, 2]
    ids = [i for i, _, _ in _committed_runs(habitat.workspace.db_path)]
    assert len(set(ids)) == len(ids) == 2
    assert Path(first.spool).parent != Path(again.spool).parent


async def test_any_error_of_the_spawn_leaves_no_running_row_behind(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    def refuse(output: Path) -> None:
        raise ValueError("embedded null byte")

    spawner.before_spawn = refuse
    with pytest.raises(ValueError, match="embedded null byte"):
        await habitat.run(RunArgs(command="true", tab="x"))
    assert _committed_runs(habitat.workspace.db_path) == []
    spawner.before_spawn = None
    assert (await habitat.run(RunArgs(command="true", tab="x"))).index == 1
