"""The composition root: one database, journal and bus for every service of a workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agent_habitat import habitat as habitat_module
from agent_habitat.config import ShellConfig
from agent_habitat.errors import ConfigError, UsageError
from agent_habitat.habitat import Habitat
from agent_habitat.testing.conditions import eventually
from agent_habitat.verify.runner.accounting import TimeReport
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio


def _git_tree(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    return root


async def test_the_services_share_one_bus_journaled_with_the_configured_limit(
    tmp_path: Path,
) -> None:
    config = ShellConfig(journal_limit=123)
    async with Habitat.open(Workspace.for_project(tmp_path), config=config) as habitat:
        assert habitat.shell.bus is habitat.bus
        assert habitat.project.bus is habitat.bus
        assert habitat.shell.db is habitat.db
        assert habitat.journal.limit == 123
        habitat.bus.publish("file.written")
        assert [e.kind for e in habitat.journal.since(0)] == ["file.written"]
        assert habitat.bus.publish("file.edited").workspace == str(tmp_path.resolve())


async def test_the_project_is_the_flag_else_the_git_tree_of_the_workspace_else_none(
    tmp_path: Path,
) -> None:
    repo, plain = _git_tree(tmp_path / "repo"), tmp_path / "plain"
    plain.mkdir()
    async with Habitat.open(Workspace.for_project(repo), project=plain) as habitat:
        assert (habitat.project.root, habitat.project.source) == (plain, "flag")
        assert habitat.shell.project_root == plain
    async with Habitat.open(Workspace.for_project(repo)) as habitat:
        assert (habitat.project.root, habitat.project.source) == (repo, "cwd")
    async with Habitat.open(Workspace.for_project(plain)) as habitat:
        assert (habitat.project.root, habitat.project.source) == (None, None)
    async with Habitat.open(Workspace.named("terminal")) as habitat:
        assert habitat.project.root is None
        assert habitat.shell.project_root is None


async def test_a_project_flag_that_is_no_folder_fails_at_start_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"nowhere.*not an existing folder"):
        async with Habitat.open(Workspace.for_project(tmp_path), project=tmp_path / "nowhere"):
            pass


async def test_the_database_closes_with_the_habitat(tmp_path: Path) -> None:
    async with Habitat.open(Workspace.for_project(tmp_path)) as habitat:
        db = habitat.db
    with pytest.raises(Exception, match="closed"):
        db.query("SELECT 1")


async def test_a_caller_error_inside_the_habitat_reaches_the_caller_as_itself(
    tmp_path: Path,
) -> None:
    async def fail_inside() -> None:
        async with Habitat.open(Workspace.for_project(tmp_path)):
            raise UsageError("mine")

    with pytest.raises(UsageError, match="mine"):
        await fail_inside()


async def test_the_verify_runner_serves_the_open_project_and_leaves_with_the_habitat(
    tmp_path: Path,
) -> None:
    repo, plain = _git_tree(tmp_path / "repo"), tmp_path / "plain"
    plain.mkdir()
    async with Habitat.open(Workspace.for_project(repo)) as habitat:
        assert habitat.verify is not None
        assert habitat.verify.root == repo.resolve()
        assert [s.root for s in habitat.records.servers()] == [str(repo.resolve())]
        records = habitat.records
        db_path = habitat.db.path
    async with Habitat.open(Workspace.for_project(plain)) as habitat:
        assert habitat.verify is None
    async with Habitat.open(Workspace.for_project(repo), runner=False) as habitat:
        assert habitat.verify is None
        assert habitat.db.path == db_path
        assert habitat.records.servers() == []
    assert records is not None


async def test_an_edit_verb_write_makes_a_finished_epoch_stale_at_once(tmp_path: Path) -> None:
    from agent_habitat.files import FileWriteArgs
    from agent_habitat.verify import LadderRequest

    repo = _git_tree(tmp_path / "repo")
    (repo / "a.py").write_text("A = 1\n", encoding="utf-8")
    async with Habitat.open(Workspace.for_project(repo)) as habitat:
        runner = habitat.verify
        assert runner is not None
        ticket = await runner.request(LadderRequest(rungs=["diagnose.files"]), wait=True)
        assert ticket.result is not None
        assert not ticket.result.stale
        await habitat.files.write(FileWriteArgs(path="a.py", content="A = 2\n"))
        epoch = runner.epoch(ticket.task)
    assert epoch is not None
    assert epoch.stale
    assert epoch.changed == ["a.py"]


async def test_a_run_left_unfinished_by_a_closed_habitat_reads_lost_not_queued(
    tmp_path: Path,
) -> None:
    from agent_habitat.verify import LadderRequest

    repo = _git_tree(tmp_path / "repo")
    (repo / "a.py").write_text("A = 1\n", encoding="utf-8")
    async with Habitat.open(Workspace.for_project(repo)) as habitat:
        runner = habitat.verify
        assert runner is not None
        ticket = await runner.request(LadderRequest(rungs=["diagnose.files"]))
    async with Habitat.open(Workspace.for_project(repo), runner=False) as habitat:
        status = await habitat.verifier.status(ticket.task)
    assert status.recorded
    assert status.served_by is None
    assert status.epoch is not None
    assert (status.epoch.state, status.green) == ("lost", False)
    assert status.summary.startswith("lost: ")


async def test_epoch_numbers_go_on_across_hosts_so_a_higher_one_is_newer(tmp_path: Path) -> None:
    from agent_habitat.verify import LadderRequest

    repo = _git_tree(tmp_path / "repo")
    (repo / "a.py").write_text("A = 1\n", encoding="utf-8")
    numbers: list[int] = []
    for _host in range(2):
        async with Habitat.open(Workspace.for_project(repo)) as habitat:
            runner = habitat.verify
            assert runner is not None
            for _ in range(2):
                ticket = await runner.request(LadderRequest(rungs=["diagnose.files"]), wait=True)
                numbers.append(ticket.epoch)
    assert numbers == [1, 2, 3, 4]


async def test_a_recorded_epoch_gone_stale_after_it_finished_is_fresh_once_the_file_is_back(
    tmp_path: Path,
) -> None:
    from agent_habitat.files import FileWriteArgs
    from agent_habitat.verify import LadderRequest

    repo = _git_tree(tmp_path / "repo")
    (repo / "a.py").write_text("A = 1\n", encoding="utf-8")
    async with Habitat.open(Workspace.for_project(repo)) as habitat:
        runner = habitat.verify
        assert runner is not None
        ticket = await runner.request(LadderRequest(rungs=["diagnose.files"]), wait=True)
        assert ticket.result is not None
        verified = ticket.result.state
        await habitat.files.write(FileWriteArgs(path="a.py", content="A = 2\n"))
        assert (await habitat.verifier.status()).stale
    async with Habitat.open(Workspace.for_project(repo), runner=False) as habitat:
        assert (await habitat.verifier.status(ticket.task)).stale  # as recorded
        (repo / "a.py").write_text("A = 1\n", encoding="utf-8")  # an undo
        status = await habitat.verifier.status(ticket.task)
    assert status.recorded
    assert status.epoch is not None
    assert not status.stale
    assert (status.epoch.state, status.epoch.changed) == (verified, [])


_ONE_SHOT = """
import sys, anyio
from pathlib import Path
from agent_habitat.habitat import Habitat
from agent_habitat.workspace import Workspace

async def main() -> None:
    root = Path(sys.argv[1])
    async with Habitat.open(Workspace.for_project(root), runner=False) as habitat:
        assert habitat.shell.project_root == root
        loaded = sorted(m for m in sys.modules if m.startswith("agent_habitat.verify.runner."))
        assert loaded == ["agent_habitat.verify.runner.config"], loaded
        assert habitat.verifier.records is habitat.records  # built on first use, once
        assert habitat.verifier.accounting is habitat.accounting
        assert habitat.verify is None

anyio.run(main)
"""


def test_a_one_shot_habitat_builds_the_verify_parts_only_when_asked(tmp_path: Path) -> None:
    # A one-shot shell command (runner=False) uses no record, accounting or slot: their models
    # are not even imported (issue 25: a fifth of `habitat run`'s CPU without a host).
    root = _git_tree(tmp_path / "repo")
    subprocess.run([sys.executable, "-c", _ONE_SHOT, str(root)], check=True, env=dict(os.environ))


async def test_a_bad_runner_key_still_fails_a_one_shot_shell_habitat_at_start(
    tmp_path: Path,
) -> None:
    root = _git_tree(tmp_path / "repo")
    (root / "pyproject.toml").write_text("[tool.habitat]\nidle_seconds = -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="idle_seconds"):
        async with Habitat.open(Workspace.for_project(root), runner=False):
            pass


async def test_a_calls_time_is_recorded_for_other_processes_once_its_answer_is_done(
    tmp_path: Path,
) -> None:
    repo = _git_tree(tmp_path / "repo")
    async with Habitat.open(Workspace.for_project(repo)) as habitat:

        def recorded() -> list[object]:
            return [s.time for s in habitat.records.servers() if s.time is not None]

        with habitat.call("mcp-1", blocked=True):
            pass
        with habitat.call("mcp-1", blocked=False):
            pass
        await eventually(lambda: bool(recorded()))
        assert len(recorded()) == 1
        with habitat.call("mcp-1", blocked=True):
            pass
        first = habitat.records.servers()[0].time
        assert first is not None
        await eventually(lambda: habitat.records.servers()[0].time != first)


async def test_calls_in_a_burst_write_their_time_once_until_the_interval_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Once a call, the write (a transaction, the report's JSON) took the host's loop beside
    # the next calls; the calls after the first wait for the interval, in one report.
    monkeypatch.setattr(habitat_module, "NOTE_TIME_SECONDS", 3600.0)
    repo = _git_tree(tmp_path / "repo")
    async with Habitat.open(Workspace.for_project(repo)) as habitat:
        writes: list[object] = []
        write = habitat.records.note_time

        def counted(report: TimeReport) -> None:
            writes.append(report)
            write(report)

        monkeypatch.setattr(habitat.records, "note_time", counted)
        with habitat.call("mcp-1", blocked=True):
            pass
        await eventually(lambda: len(writes) == 1)
        for _ in range(5):
            with habitat.call("mcp-1", blocked=True):
                pass
        await anyio.wait_all_tasks_blocked()  # the lull's jobs done, the next write waiting
        assert len(writes) == 1
