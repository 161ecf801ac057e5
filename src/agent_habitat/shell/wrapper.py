"""The tiny wrapper each command runs in: at exit it records the exit code, the final cwd
and the exported environment into `state` in the run folder, so the next command in the
tab starts where this one left off — even when the habitat that started it is gone.

The wrapper uses only builtins (no fork): a command substitution would cost a millisecond.
`state` is `<exit code>\\0<cwd>\\0<env dump>`; the dump is bash's `declare -px`, POSIX
`export -p` (sh), NUL-separated NAME=value pairs (zsh), or absent (fish, pwsh: cwd only).
The file is created 0600 before the command starts (and written under `umask 077`), empty,
and the wrapper appends to it (`>>`), never truncates it: on ext4 an open that truncates a
file, even an empty one, makes its close start writing the data out at once (auto_da_alloc),
which the wrapper's exit waits for, and so does the later unlink (by hand at load 22: the
wrapper's exit 1.5 → 0.7 ms after its go line, the unlink of `state` 5 → 0.013 ms). And
the habitat that records the run's end removes it once it is recorded (`drop_state`), or
rewrites the dump as the delta against its base environment (JSON, in `state.lean`, then
`state` goes) when it reads it before that, so the whole environment, secrets included,
does not stay at rest in the spool.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .environment import apply_delta, base_env, env_delta
from .shells import ShellInfo

__all__ = [
    "FinalState",
    "RunFiles",
    "joins_group",
    "parse_env_dump",
    "prestart_argv",
    "wrapper_argv",
]

# Shell-private names that differ from run to run; never carried between commands.
_VOLATILE = frozenset({"_", "SHLVL", "PWD", "OLDPWD", "HABITAT_RUN_ID", "HABITAT_CGROUP"})

# First thing, the shell joins its run's cgroup (proc/cgroup.py), before it can fork. Silent
# when it cannot (another habitat's sweep may have removed the still-empty group; the
# spawner's `place` puts the shell there anyway): the braces make the redirection's own
# error go to /dev/null too, which a trailing `2>/dev/null` would not.
_POSIX_TRAP = (
    '[ -z "$HABITAT_CGROUP" ] || {{ echo $$ >"$HABITAT_CGROUP/cgroup.procs"; }} 2>/dev/null;'
    " __hd=$1; __c=$2; shift 2; trap '__rc=$?; trap - EXIT; umask 077;"
    ' {{ printf "%s\\0%s\\0" "$__rc" "$PWD"; {dump}; }} >>"$__hd/state" 2>/dev/null\''
    ' EXIT; unset __rc; eval "$__c"'
)
_BASH = _POSIX_TRAP.format(dump="unset __hd __c HABITAT_RUN_ID HABITAT_CGROUP; declare -px")
# Started ahead of its run (`proc.supervised.prestart`, which places it in the run's cgroup
# before it can fork): it waits for its run folder on stdin (EOF: no run, it exits), then its
# command, NUL-ended, on stdin too; an empty one means the command is in `cmd` (a long one:
# bash reads a pipe byte by byte, a file in blocks). Then it takes its output and stdin
# /dev/null, and goes on as `_BASH` does.
_BASH_PRESTARTED = (
    "IFS= read -r __hd || exit 0; IFS= read -r -d '' __c;"
    ' [ -n "$__c" ] || IFS= read -r -d \'\' __c <"$__hd/cmd";'
    ' exec </dev/null >>"$__hd/output" 2>&1;'
    " trap '__rc=$?; trap - EXIT; umask 077;"
    ' { printf "%s\\0%s\\0" "$__rc" "$PWD"; unset __hd __c HABITAT_RUN_ID HABITAT_CGROUP;'
    ' declare -px; } >>"$__hd/state" 2>/dev/null\' EXIT; unset __rc; eval "$__c"'
)
# The longest command (UTF-8 bytes) a prestarted wrapper reads from its stdin rather than
# from `cmd`: a file made and read is a few metadata operations on each side, a byte read
# from a pipe well under a microsecond.
_INLINE_COMMAND_BYTES = 512
# What bash runs at its start, before any script: a prestarted wrapper would run it before
# its command was asked for, and trace its own lines elsewhere than the run's output.
_STARTUP_ENV = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS")
_SH = _POSIX_TRAP.format(dump="unset __hd __c HABITAT_RUN_ID HABITAT_CGROUP; export -p")
_ZSH = _POSIX_TRAP.format(
    dump="unset __hd __c; for __n in ${(k)parameters[(R)*export*]};"
    ' do printf "%s=%s\\0" "$__n" "${(P)__n}"; done'
)
# `set -l __rc $status` first: any command, `umask` too, resets fish's $status.
_FISH = (
    "set -g __hd $argv[1]; function __habitat_exit --on-event fish_exit;"
    " set -l __rc $status; umask 077; printf '%s\\0%s\\0' $__rc $PWD >>$__hd/state; end;"
    " source $__hd/cmd"
)
_PWSH = (
    "$__hd = $args[0]; try { . (Join-Path $__hd 'cmd.ps1') } finally {"
    " $__rc = if ($?) { if ($LASTEXITCODE) { $LASTEXITCODE } else { 0 } } else { 1 };"
    " \"$__rc`0$((Get-Location).Path)`0\" | Set-Content -NoNewline (Join-Path $__hd 'state');"
    " exit $__rc }"
)


@dataclass(frozen=True)
class FinalState:
    """What the wrapper recorded as its shell exited: where the next command starts."""

    exit_code: int
    cwd: str | None
    env: dict[str, str] | None
    whole_dump: bool = False
    """`state` still holds the whole environment (see `RunFiles.forget_dump`)."""


@dataclass(frozen=True)
class RunFiles:
    """Paths inside one run folder."""

    root: Path

    @functools.cached_property
    def output(self) -> Path:
        return self.root / "output"

    @functools.cached_property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def lean_state(self) -> Path:
        """`state` with its environment dump rewritten as the delta (`forget_dump`)."""
        return self.root / "state.lean"

    def prepare_prestarted(self, command: str, *, made_ahead: bool = False) -> bytes:
        """The files a prestarted wrapper (`prestart_argv`) reads and writes, private: its
        `output` (which it opens itself, under the user's umask; made already when the
        folder was `made_ahead`, see `shell.prestarts`) and, for a long command, its `cmd`.
        Its `state` was made ahead with the folder, or it makes it itself under `umask 077`.
        Returns what to write on its stdin: the run folder's line, then the command (empty:
        read `cmd`), NUL-ended."""
        data = command.encode("utf-8")
        if len(data) > _INLINE_COMMAND_BYTES or b"\0" in data or not data:
            _write_private(self.root / "cmd", command)
            data = b""
        if not made_ahead:
            os.close(os.open(self.output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        return os.fsencode(f"{self.root}\n") + data + b"\0"

    def prepare_state(self) -> None:
        """Create `state` private (0600) before the wrapper writes it: the shell's redirection
        keeps an existing file's mode whatever the command's umask."""
        os.close(os.open(self.state, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))

    def state_written_at(self) -> float | None:
        """When the wrapper wrote `state` (as its shell exited); None when it never did (an
        empty `state` is one made before the run, never written)."""
        for path in (self.state, self.lean_state):  # as `_recorded` reads
            try:
                written = path.stat()
            except OSError:
                continue
            if written.st_size:
                return written.st_mtime
        return None

    def _recorded(self) -> bytes | None:
        """What the wrapper recorded: `state` as it wrote it, else the lean rewrite. `state`
        first: a run that just ended has no rewrite yet (an open that fails costs as much as
        one that reads). The rewrite makes `state.lean` before it removes `state` (never
        changed in place), so when `state` is gone the rewrite is there."""
        for path in (self.state, self.lean_state):
            try:
                return _read_whole(path)
            except OSError:
                continue
        return None

    def read_state(self, *, rewrite: bool = True) -> FinalState | None:
        """What the wrapper recorded at exit; None when it never got to (killed, lost).

        A whole environment dump is rewritten as its delta on first read (every later read,
        by this or another habitat process, sees the same environment); with `rewrite`
        false, later, by the caller (`forget_dump`)."""
        raw = self._recorded()
        if raw is None:
            return None
        parts = raw.split(b"\0", 2)
        if len(parts) < 3:
            return None
        try:
            code = int(parts[0])
        except ValueError:
            return None
        cwd = parts[1].decode("utf-8", "surrogateescape") or None
        env = parse_env_dump(parts[2]) if parts[2] else None
        whole = env is not None and not parts[2].startswith(b"{")
        if rewrite and env is not None and whole:
            delta = json.dumps(env_delta(env, base_env())).encode("utf-8", "surrogateescape")
            self._replace_state(b"\0".join([parts[0], parts[1], delta]))
            whole = False
        return FinalState(code, cwd, env, whole)

    def drop_state(self) -> None:
        """Remove what the wrapper recorded, once the run's end is in the database (nothing
        reads it then): the whole environment it dumped does not stay at rest, and no
        rewrite (`forget_dump`) makes a file for it."""
        with contextlib.suppress(OSError):
            os.unlink(self.state)

    def forget_dump(self) -> None:
        """Rewrite a whole environment dump in `state` as its delta (`read_state`), if it
        still holds one: a file made, renamed and `state` removed (see `_replace_state`)."""
        self.read_state()

    def _replace_state(self, data: bytes) -> None:
        # Renamed to a new name, then `state` removed, rather than renamed over `state`: on
        # ext4 a rename over an existing file first writes the new file's data to the disk
        # (auto_da_alloc), 4-5 ms a run where a rename to a free name takes microseconds.
        # A reader prefers `state.lean`, so every step leaves a whole record to read.
        temporary = self.root / "state.tmp"
        try:
            # Its mtime says when the wrapper's shell exited (the end time of a run that
            # ended unwatched): the rewrite keeps it.
            written = os.stat(self.state)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.utime(temporary, ns=(written.st_atime_ns, written.st_mtime_ns))
            if self.lean_state.exists():  # another habitat process rewrote it meanwhile
                os.unlink(temporary)
            else:
                os.rename(temporary, self.lean_state)
            os.unlink(self.state)
        except OSError:
            return  # the dump stays as the wrapper wrote it, private to the user


def wrapper_argv(shell: ShellInfo, run_dir: Path, command: str) -> list[str]:
    """The argv that runs `command` under `shell` with the recording wrapper (its `state`
    is created here, private)."""
    RunFiles(run_dir).prepare_state()
    if shell.kind == "pwsh":
        _write_private(run_dir / "cmd.ps1", command + "\n")
        return [shell.executable, "-NoProfile", "-NonInteractive", "-Command", _PWSH, str(run_dir)]
    if shell.kind == "fish":
        _write_private(run_dir / "cmd", command + "\n")
        return [shell.executable, "--no-config", "-c", _FISH, str(run_dir)]
    script = {"bash": _BASH, "zsh": _ZSH, "sh": _SH}[shell.kind]
    flags = ["-f"] if shell.kind == "zsh" else []
    # $0 is the shell's name, as a person's `bash -c` shows it.
    return [shell.executable, *flags, "-c", script, shell.kind, str(run_dir), command]


def joins_group(shell: ShellInfo) -> bool:
    """Whether `wrapper_argv` moves itself into its run's cgroup before it can fork."""
    return shell.kind in ("bash", "zsh", "sh")


def prestart_argv(shell: ShellInfo, env: Mapping[str, str]) -> list[str] | None:
    """The argv of a wrapper that can start ahead of its run (`proc.supervised.prestart`),
    told its run folder by a line on its stdin (whose `cmd` holds the command, see
    `RunFiles.prepare_prestarted`); None where the shell cannot (bash only, and only when
    `env` makes bash run nothing at its start)."""
    if shell.kind != "bash" or any(name in env for name in _STARTUP_ENV):
        return None
    return [shell.executable, "-c", _BASH_PRESTARTED, shell.kind]


def _read_whole(path: Path) -> bytes:
    """The file's bytes: an open, reads and a close (`Path.read_bytes` adds a stat, an
    ioctl and two seeks)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def parse_env_dump(raw: bytes) -> dict[str, str]:
    """Any of the three dump formats the wrappers write, or the delta `read_state` left."""
    if raw.startswith(b"{"):
        try:
            delta = json.loads(raw.decode("utf-8", "surrogateescape"))
            return apply_delta({"set": delta["set"], "unset": delta["unset"]}, base_env())
        except (ValueError, KeyError, TypeError):
            return {}
    return dict(_parse_env_dump(raw))


# Consecutive commands of a tab mostly leave the environment as it was: same bytes, same dict.
@functools.lru_cache(maxsize=32)
def _parse_env_dump(raw: bytes) -> tuple[tuple[str, str], ...]:
    text = raw.decode("utf-8", "surrogateescape")
    if text.startswith("declare "):
        env = _parse_declare(text)
    elif text.startswith("export "):
        env = _parse_export(text)
    else:
        env = {}
        for item in text.split("\0"):
            name, sep, value = item.partition("=")
            if sep and name:
                env[name] = value
    return tuple((k, v) for k, v in env.items() if k not in _VOLATILE)


_DECLARE = re.compile(
    r"^declare -[A-Za-z-]+ ([A-Za-z_][A-Za-z0-9_]*)"
    r"""(?:=("(?:[^"\\]|\\.)*"|\$'(?:[^'\\]|\\.)*'))?$""",
    re.M | re.S,
)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ANSI_C = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xuU":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit():
            return chr(int(esc, 8))
        if esc[0] == "c":
            return chr(ord(esc[1]) & 0x1F)
        return _SIMPLE.get(esc, "\\" + esc)

    return _ANSI_C.sub(one, body)


def _parse_declare(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for m in _DECLARE.finditer(text):
        value = m.group(2)
        if value is None:
            continue  # exported but unset: nothing to carry
        if value.startswith("$'"):
            env[m.group(1)] = _ansi_c(value[2:-1])
        else:
            env[m.group(1)] = _DQ_ESCAPE.sub(r"\1", value[1:-1])
    return env


def _parse_export(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        return env
    for word in words:
        name, sep, value = word.partition("=")
        if sep and name.isidentifier():
            env[name] = value
    return env
