"""FIFOs, sockets and other special files in a project never hang or crash the habitat.

Issue 23 ("Medium"): a FIFO made `file_write` hang for good (and uncancellably); about 40
of them wedged every file write and shell run; a project without git made `habitat verify`
hang on one; opening `/` made the snapshot open sockets and `/proc` files. Each call here
is bounded: before the fix these tests hung until their timeout.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_habitat.regular import NotRegularFileError, open_regular
from agent_habitat.verify.runner.watch import ProjectWatcher
from agent_habitat.verify.snapshot import file_hash, take_snapshot
from mcp_tools.helpers import make_project, primary_client
from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.finding("special-files")]

# A bound on each call, not a speed claim: a refusal takes milliseconds; a hang is forever.
BOUND_S = 30


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def unix_socket(project: Path) -> Iterator[Path]:
    path = project / "listening.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        yield path


async def test_file_write_on_a_fifo_is_refused_by_type_naming_the_path(project: Path) -> None:
    os.mkfifo(project / "pipe")
    async with primary_client(project) as (_, client):
        with anyio.fail_after(BOUND_S):
            result = await client.call_tool("file_write", {"path": "pipe", "content": "x\n"})
    assert result.is_error
    assert "pipe is a FIFO (named pipe), not a regular file" in text(result)
    assert (project / "pipe").is_fifo()  # never replaced by a regular file either


async def test_file_edit_on_a_fifo_is_refused_by_type_naming_the_path(project: Path) -> None:
    os.mkfifo(project / "pipe.py")
    edits = [{"old": "a", "new": "b"}]
    async with primary_client(project) as (_, client):
        with anyio.fail_after(BOUND_S):
            result = await client.call_tool("file_edit", {"path": "pipe.py", "edits": edits})
    assert result.is_error
    assert "pipe.py is a FIFO (named pipe)" in text(result)


async def test_file_write_on_a_socket_is_refused_by_type(project: Path, unix_socket: Path) -> None:
    async with primary_client(project) as (_, client):
        with anyio.fail_after(BOUND_S):
            result = await client.call_tool(
                "file_write", {"path": unix_socket.name, "content": "x\n"}
            )
    assert result.is_error
    assert f"{unix_socket.name} is a socket, not a regular file" in text(result)


async def test_forty_fifos_do_not_wedge_file_writes_or_shell_runs(project: Path) -> None:
    for n in range(40):
        os.mkfifo(project / f"pipe{n}")
    refusals: list[str] = []
    async with primary_client(project) as (_, client):

        async def write_fifo(n: int) -> None:
            result = await client.call_tool("file_write", {"path": f"pipe{n}", "content": "x"})
            refusals.append(text(result) if result.is_error else "written")

        with anyio.fail_after(BOUND_S):
            async with anyio.create_task_group() as tg:
                for n in range(40):
                    tg.start_soon(write_fifo, n)
            written = await client.call_tool("file_write", {"path": "ok.txt", "content": "ok\n"})
            ran = await client.call_tool("shell_run", {"command": "cat ok.txt"})
    assert len(refusals) == 40
    assert all("FIFO" in r for r in refusals), refusals[:3]
    assert data(written)["created"] is True
    assert data(ran)["output"] == "ok\n"


def test_the_snapshot_of_a_folder_without_git_leaves_special_files_out(
    tmp_path: Path, unix_socket: Path
) -> None:
    root = unix_socket.parent
    os.rmdir(root / ".git")
    os.mkfifo(root / "pipe.py")
    (root / "mod.py").write_text("x = 1\n", encoding="utf-8")
    snapshot = take_snapshot(root)
    assert snapshot.in_git is False
    assert snapshot.touched == ["mod.py"]
    assert file_hash(root / "pipe.py") == "special"


def test_a_fifo_named_as_a_regular_file_is_refused_before_any_open(project: Path) -> None:
    os.mkfifo(project / "pipe")
    with pytest.raises(NotRegularFileError, match=r"pipe is a FIFO"):
        open_regular(project / "pipe", "pipe")


def test_the_walk_outside_git_stays_on_the_file_system_of_the_project(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "mnt").mkdir(parents=True)
    (root / "kept.txt").write_text("kept\n", encoding="utf-8")
    # A file system mounted inside the folder stands for /proc, /sys and /dev under `/`.
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "none", str(root / "mnt")], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        (root / "mnt" / "other.txt").write_text("elsewhere\n", encoding="utf-8")
        os.mkfifo(root / "mnt" / "pipe")
        assert take_snapshot(root).touched == ["kept.txt"]
    finally:
        subprocess.run(["umount", str(root / "mnt")], check=True)


def test_the_watcher_reports_no_change_for_a_fifo(project: Path) -> None:
    os.mkfifo(project / "pipe")
    (project / "real.txt").write_text("x\n", encoding="utf-8")
    watcher = ProjectWatcher(project, lambda paths: None)
    raw = {(2, str(project / "pipe")), (2, str(project / "real.txt"))}
    assert watcher._relative(raw) == ["real.txt"]


def test_habitat_verify_in_a_project_without_git_ends_beside_a_fifo(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "stuck.py")
    (root / "mod.py").write_text("x = 1\n", encoding="utf-8")
    (root / "pyproject.toml").write_text('[project]\nname = "plain"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "agent_habitat", "verify", "--policy", "minimal"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=BOUND_S * 3,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_habitat_verify_refuses_a_fifo_given_with_files(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    os.mkfifo(root / "stuck.py")
    done = subprocess.run(
        [sys.executable, "-m", "agent_habitat", "verify", "--files", "stuck.py"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=BOUND_S * 3,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "stuck.py is a FIFO (named pipe), not a regular file" in done.stderr
