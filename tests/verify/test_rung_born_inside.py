"""A rung process starts inside its run's cgroup (`spawn`'s `enter_group`: `/bin/sh` moves
itself in, then execs the command): its end is told by one read of the group, and what it
left running is still found and killed, even a daemon that left its session and cleared
its environment. The command runs as given, and one Popen cannot start is refused as before.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import psutil
import pytest

from agent_habitat.proc import ProcessRecord, cgroup
from agent_habitat.verify.command import child_env, run_command, spool_path

pytestmark = pytest.mark.anyio

_CGROUP = pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup")


async def _run(tmp_path: Path, argv: list[str], seen: list[ProcessRecord] | None = None) -> str:
    outcome = await run_command(
        argv,
        cwd=tmp_path,
        env=child_env(),
        spool=spool_path(tmp_path / "spool", f"v1.test.scoped.{len(os.listdir(tmp_path))}.out"),
        limit_s=60,
        cap=4096,
        on_spawn=None if seen is None else seen.append,
    )
    assert outcome.exit_code == 0, outcome.text
    return outcome.text


async def test_the_command_gets_its_own_argv(tmp_path: Path) -> None:
    # `exec "$@"` hands the program its argv whole: its $0 and words with spaces and quotes.
    text = await _run(tmp_path, ["sh", "-c", 'printf "%s|" "$0" "$@"', "zero", "a b", "'c'"])
    assert text == "zero|a b|'c'|"


async def test_a_program_named_by_a_path_under_the_cwd_runs(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho tool ran with $1\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    assert await _run(tmp_path, ["bin/tool", "x"]) == "tool ran with x\n"


@pytest.mark.parametrize("program", ["habitat-no-such-tool-5501", "./not-here"])
async def test_a_program_that_is_not_there_is_refused_by_popen_as_before(
    tmp_path: Path, program: str
) -> None:
    with pytest.raises(FileNotFoundError):
        await _run(tmp_path, [program])


async def test_a_program_that_is_not_executable_is_refused_by_popen_as_before(
    tmp_path: Path,
) -> None:
    (tmp_path / "plain").write_text("echo hi\n", encoding="utf-8")
    with pytest.raises(PermissionError):
        await _run(tmp_path, ["./plain"])


@_CGROUP
async def test_a_rung_that_ended_alone_leaves_no_group(tmp_path: Path) -> None:
    seen: list[ProcessRecord] = []
    await _run(tmp_path, ["sh", "-c", "exit 0"], seen)
    (record,) = seen
    assert record.marker is not None
    # Its group held it from its first builtin on, and was empty at its end: removed then.
    assert cgroup.group_pids(record.marker) is None


@_CGROUP
async def test_a_daemon_that_left_the_session_and_cleared_its_environment_is_killed(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "daemon.pid"
    # setsid: out of the rung's session; env -i: without the run's marker. Only the group
    # the rung was born in still holds it.
    script = f"setsid env -i sh -c 'echo $$ >{pid_file}; exec sleep 3054' >/dev/null 2>&1 &"
    seen: list[ProcessRecord] = []
    script += f" while [ ! -s {pid_file} ]; do sleep 0.01; done"
    await _run(tmp_path, ["sh", "-c", script], seen)
    daemon = int(pid_file.read_text(encoding="ascii"))
    try:
        assert not psutil.pid_exists(daemon) or psutil.Process(daemon).status() == "zombie"
    finally:
        if psutil.pid_exists(daemon):
            os.kill(daemon, 9)
