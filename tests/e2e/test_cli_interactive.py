"""`habitat run --interactive` from the CLI: a foreground run reads the person's stdin (a pipe
or a terminal) and ends with it; a background one keeps its stdin open, through the host,
for `habitat input` from other processes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_habitat.reach import find_host, stop_host

_HABITAT = [sys.executable, "-m", "agent_habitat"]
# A real process reads its stdin, so every bound here is what a hang would hit, not a pace
# (a host's start on a loaded 2-core machine can take half a minute).
_BOUND = 120.0


@pytest.fixture
def root(project: Path) -> Iterator[Path]:
    yield project
    stop_host(project)  # a background interactive run starts one


def _habitat(root: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_HABITAT, *argv, "--project", str(root)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=_BOUND,
        check=False,
    )


def test_a_foreground_interactive_run_reads_piped_stdin_and_ends_with_it(root: Path) -> None:
    done = _habitat(root, "run", "--interactive", "cat", stdin="a\nb\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "a\nb\n"
    assert "exit 0" in done.stderr
    assert find_host(root) is None  # a foreground run needs no host


def test_a_foreground_interactive_run_without_input_sees_end_of_input_at_once(
    root: Path,
) -> None:
    done = _habitat(root, "run", "--interactive", "wc -l", stdin="")
    assert (done.returncode, done.stdout.strip()) == (0, "0"), done.stderr


def _read_until(fd: int, needle: bytes, seen: bytearray) -> None:
    """Read the terminal's output until `needle` shows (or the bound passes)."""
    while needle not in seen:
        ready, _, _ = select.select([fd], [], [], _BOUND)
        assert ready, f"no {needle!r} on the terminal; it showed {bytes(seen)!r}"
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: every holder of the terminal's other side is gone
            chunk = b""
        assert chunk, f"the terminal closed before {needle!r}; it showed {bytes(seen)!r}"
        seen += chunk


def _on_terminal(root: Path, command: str) -> tuple[subprocess.Popen[bytes], int, int]:
    """`habitat run --interactive COMMAND` as a person starts it: on a terminal that controls
    it (its own session), so Ctrl-C there is a SIGINT for it."""
    master, slave = os.openpty()

    def take_terminal() -> None:
        import fcntl

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [*_HABITAT, "run", "--interactive", command, "--project", str(root)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=take_terminal,
    )
    return proc, master, slave


# Handles Ctrl-C as a REPL does: says so and goes on reading.
_REPL = (
    'python3 -c "import signal, sys\n'
    "signal.signal(signal.SIGINT, lambda *a: print('got INT', flush=True))\n"
    "for line in sys.stdin: print('got', line.strip(), flush=True)\""
)


def test_on_a_terminal_typed_lines_and_ctrl_c_reach_the_run_and_the_mode_is_restored(
    root: Path,
) -> None:
    proc, master, slave = _on_terminal(root, _REPL)
    before = termios.tcgetattr(slave)
    seen = bytearray()
    try:
        os.write(master, b"hello\n")
        _read_until(master, b"got hello", seen)
        os.write(master, b"\x03")  # Ctrl-C, as the person's terminal sends it
        _read_until(master, b"got INT", seen)
        _read_until(master, b"reached #1; it goes on", seen)  # the CLI saw it survive
        os.write(master, b"after\n")  # the run handled it and goes on; so does the CLI
        _read_until(master, b"got after", seen)
        os.write(master, b"\x04")  # Ctrl-D at the start of a line: end of input
        assert proc.wait(timeout=_BOUND) == 0, bytes(seen)
        assert termios.tcgetattr(slave) == before
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)


def test_on_a_terminal_ctrl_c_that_ends_the_run_is_its_end(root: Path) -> None:
    proc, master, slave = _on_terminal(root, "cat")
    seen = bytearray()
    try:
        os.write(master, b"typed\n")
        _read_until(master, b"typed\r\ntyped", seen)  # the terminal's echo, then cat's copy
        os.write(master, b"\x03")
        _read_until(master, b"killed by SIGINT", seen)
        assert proc.wait(timeout=_BOUND) == 130, bytes(seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)


@pytest.mark.timeout(900)  # seven CLI processes and a host's start, each within _BOUND
def test_a_background_interactive_run_takes_input_from_other_processes_until_eof(
    root: Path,
) -> None:
    started = _habitat(root, "run", "--interactive", "--background", "cat", "--tab", "repl")
    assert started.returncode == 0, started.stderr
    assert "host" in started.stderr  # it says the host now holds the run's stdin
    assert find_host(root) is not None
    first = _habitat(root, "input", "repl", "one\n", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["bytes_written"] == 4
    second = _habitat(root, "input", "repl", "two\n", "--eof")
    assert second.returncode == 0, second.stderr
    waited = _habitat(root, "wait", "repl", "--timeout-seconds", str(_BOUND), "--json")
    assert waited.returncode == 0, waited.stderr
    assert json.loads(waited.stdout)["exit_code"] == 0
    last = _habitat(root, "last", "repl")
    assert last.stdout == "one\ntwo\n"
    # With the host serving, a foreground interactive run goes through it the same way.
    done = _habitat(root, "run", "--interactive", "cat", "--tab", "piped", stdin="a\nb\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "a\nb\n"
