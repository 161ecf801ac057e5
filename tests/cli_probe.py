"""A `habitat` command in a fresh interpreter, and which heavy modules it loaded: how the
tests of the CLI's quick paths (a reader of `state.db`, no habitat built) tell which path
answered, and compare it with the full path's answer (the quick reader stood down).

The full path's answers to many commands come from one interpreter (`full_path`): each
fresh one cost about 0.4 CPU-s to build the habitat (a quick one 0.05 s), and
test_cli_quiet_verbs.py asked 12 of them in a row. Each command there still runs as
`main(argv)` with its own stdout and stderr (file descriptors 1 and 2, as a process's). The
quick path's answers can come from one too (`full_path` with nothing stood down): a test that
each must load nothing heavy checks `loaded` after every command, which is what the
interpreter has loaded so far (a fresh quick one cost about 0.2 CPU-s with coverage)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["HEAVY", "PROBE", "FullPath", "Probed", "full_path", "probe"]

HEAVY = ("pydantic", "anyio", "agent_habitat.habitat")
PROBE = (
    "import sys\nfrom agent_habitat.cli import main\ncode = main(sys.argv[1:])\n"
    f"heavy = {HEAVY!r}\n"
    "print('\\nloaded:', *[n for n in heavy if n in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)"
)
# One JSON line in (argv), one out (code, stdout, stderr, loaded), over descriptors of its
# own: 1 and 2 are a temporary file each while a command runs. Its argv: the heavy modules.
_SERVE = """
import json, os, sys, tempfile
from agent_habitat.cli import main

heavy = sys.argv[1:]
replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
for line in sys.stdin:
    argv = json.loads(line)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        said = {"out": out.read().hex(), "err": err.read().hex()}
    loaded = [n for n in heavy if n in sys.modules]
    replies.write(json.dumps({"code": code, **said, "loaded": loaded}) + "\\n")
    replies.flush()
"""


class Probed:
    """What a probed command did: its exit code, stdout, stderr (the probe's own line left
    out) and the heavy modules it loaded (`HEAVY`, space-separated; empty for none)."""

    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        err, _, loaded = done.stderr.rpartition("\nloaded:")
        self.code, self.stdout, self.stderr = done.returncode, done.stdout, err
        self.loaded = loaded.strip()

    def answer(self) -> tuple[int, str, str]:
        return self.code, self.stdout, self.stderr


def probe(root: Path, *argv: str, prelude: str = "", **env: str) -> Probed:
    """`habitat ARGV` in `root`, in a fresh interpreter with `env` added; `prelude`: code
    run first (a test's seam)."""
    done = subprocess.run(
        [sys.executable, "-c", prelude + PROBE, *argv],
        capture_output=True,
        text=True,
        # A bound for a hung process, not a speed claim (the full path builds the habitat).
        timeout=180,
        check=False,
        env={**os.environ, **env},
        cwd=root,
    )
    return Probed(done)


def _text(said: bytes) -> str:
    """Bytes as `subprocess.run(text=True)` decodes them (locale encoding, universal
    newlines), so an answer from `FullPath` compares with one from `probe`."""
    return io.TextIOWrapper(io.BytesIO(said)).read()


class FullPath:
    """One interpreter (the quick reader stood down) that answers command after command."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process

    def __call__(self, *argv: str) -> Probed:
        """`habitat ARGV` as `probe` answers it, from the full path; `loaded` is what the
        interpreter has loaded by then (so far, not this command's alone)."""
        code, out, err, loaded = self.raw(*argv)
        text = _text(out), _text(err) + "\nloaded: " + loaded
        return Probed(subprocess.CompletedProcess(argv, code, *text))

    def raw(self, *argv: str) -> tuple[int, bytes, bytes, str]:
        """Exit code, stdout, stderr (bytes) and the heavy modules loaded so far."""
        process = self._process
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(json.dumps(list(argv)) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        assert line, f"the full-path interpreter ended (exit {process.wait(timeout=30)})"
        reply = json.loads(line)
        said = bytes.fromhex(reply["out"]), bytes.fromhex(reply["err"])
        return reply["code"], *said, " ".join(reply["loaded"])


@contextmanager
def full_path(root: Path, stand_down: str, heavy: tuple[str, ...] = HEAVY) -> Iterator[FullPath]:
    """`FullPath` in `root`, with this process's environment at the start; `stand_down`:
    code run first, a quick reader replaced by `lambda *a: None` so the full path answers
    (or only a test's seam, the quick paths left on); `heavy`: the modules whose loading it
    reports."""
    process = subprocess.Popen(
        [sys.executable, "-c", stand_down + _SERVE, *heavy],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        cwd=root,
    )
    try:
        yield FullPath(process)
    finally:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.close()  # its end of input: the interpreter leaves
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
