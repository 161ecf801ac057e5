from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_habitat.shell.shells import ShellInfo, resolve_shell
from agent_habitat.shell.wrapper import RunFiles, parse_env_dump, prestart_argv, wrapper_argv


def test_bash_declare_dump_is_unescaped() -> None:
    dump = (
        b'declare -x PLAIN="value"\n'
        b'declare -x QUOTED="q\\"\\$\\`\\\\z"\n'
        b"declare -x NEWLINE=$'x\\ny'\n"
        b"declare -x CTRL=$'a\\001b'\n"
        b"declare -x UNSET\n"
        b'declare -rx READONLY="r"\n'
        b'declare -x SHLVL="3"\n'
    )
    env = parse_env_dump(dump)
    assert env == {
        "PLAIN": "value",
        "QUOTED": 'q"$`\\z',
        "NEWLINE": "x\ny",
        "CTRL": "a\x01b",
        "READONLY": "r",
    }


def test_posix_export_dump_handles_single_quotes_and_newlines() -> None:
    dump = b"export A='x\ny'\nexport D='it'\"'\"'s'\nexport PWD='/tmp'\n"
    assert parse_env_dump(dump) == {"A": "x\ny", "D": "it's"}


def test_nul_separated_dump() -> None:
    assert parse_env_dump(b"A=1\0B=x=y\0_=ignored\0") == {"A": "1", "B": "x=y"}


def test_state_file_without_env_means_cwd_only(tmp_path: Path) -> None:
    (tmp_path / "state").write_bytes(b"3\0/some/where\0")
    state = RunFiles(tmp_path).read_state()
    assert state is not None
    assert (state.exit_code, state.cwd, state.env) == (3, "/some/where", None)


def test_truncated_state_file_is_not_an_exit(tmp_path: Path) -> None:
    (tmp_path / "state").write_bytes(b"0")
    assert RunFiles(tmp_path).read_state() is None
    assert RunFiles(tmp_path / "missing").read_state() is None


@pytest.mark.parametrize("kind", ["bash", "sh"])
def test_a_cgroup_removed_before_the_shell_joins_it_is_not_an_error_in_the_output(
    kind: str, tmp_path: Path
) -> None:
    # Another habitat's sweep may remove a run's still-empty cgroup before its shell joins.
    argv = wrapper_argv(resolve_shell(kind), tmp_path, "echo ran")
    env = {**os.environ, "HABITAT_CGROUP": str(tmp_path / "gone")}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ran\n", "")


def test_a_rewritten_dump_keeps_the_record_and_drops_the_whole_environment(
    tmp_path: Path,
) -> None:
    dump = b'declare -x FOO="bar"\ndeclare -x PATH="/nowhere"\n'
    (tmp_path / "state").write_bytes(b"0\0/some/where\0" + dump)
    os.utime(tmp_path / "state", (1_000_000, 1_000_000))
    files = RunFiles(tmp_path)
    first = files.read_state(rewrite=False)
    assert first is not None
    assert first.whole_dump
    files.forget_dump()
    assert not (tmp_path / "state").exists()
    assert b"/nowhere" in (tmp_path / "state.lean").read_bytes()  # PATH differs from base
    again = files.read_state()
    assert again is not None
    assert not again.whole_dump
    assert (again.exit_code, again.cwd, again.env) == (0, "/some/where", first.env)
    assert files.state_written_at() == 1_000_000


def test_a_state_made_before_its_run_and_never_written_tells_no_end_time(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    files.prepare_state()  # what a run's start makes: the wrapper writes it as it exits
    os.utime(files.state, (1_000_000, 1_000_000))
    assert files.read_state() is None
    assert files.state_written_at() is None
    files.state.write_bytes(b"0\0/some/where\0")
    os.utime(files.state, (2_000_000, 2_000_000))
    assert files.state_written_at() == 2_000_000


@pytest.mark.parametrize("kind", ["bash", "sh", "zsh", "fish"])
def test_the_wrapper_appends_to_the_state_made_for_it_and_never_truncates_it(
    kind: str, tmp_path: Path
) -> None:
    # On ext4 an open that truncates a file, even an empty one, makes its close write the
    # data out at once (auto_da_alloc): the wrapper's exit, then the unlink of `state`,
    # waited milliseconds for that on a busy disk. `state` is made empty before the run.
    shell = ShellInfo(kind, f"/usr/bin/{kind}")
    scripts = [" ".join(wrapper_argv(shell, tmp_path, "true"))]
    prestarted = prestart_argv(shell, {})
    if prestarted is not None:
        scripts.append(" ".join(prestarted))
    for script in scripts:
        assert "$__hd/state" in script
        assert script.count("$__hd/state") == script.count(">>$__hd/state") + script.count(
            '>>"$__hd/state"'
        )
    assert RunFiles(tmp_path).state.read_bytes() == b""
