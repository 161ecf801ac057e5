"""With a host running, the shell verbs are asked of it with the standard library alone
(`cli.host_verbs`), and print what the embedded path prints, with the same exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.reach import ensure_host, stop_host
from cli_probe import FullPath, full_path

pytestmark = pytest.mark.e2e

_HEAVY = ("pydantic", "anyio", "rich", "httpx2", "agent_habitat.habitat")
_PROBE = (
    "import sys\nfrom agent_habitat.cli import main\ncode = main(sys.argv[1:])\n"
    f"heavy = {_HEAVY!r}\n"
    "print('loaded:', *[n for n in heavy if n in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)"
)
# A bound for a hung process, not a speed claim (the embedded path builds the habitat).
_CALL_TIMEOUT = 180

# Each case once embedded, once through the host: the same state is built on both sides.
_CASES: list[tuple[str, ...]] = [
    ("run", "echo hi", "--tab", "x"),
    ("run", "echo out; exit 3", "--tab", "x"),
    ("run", "sleep 5", "--tab", "y", "--timeout-seconds", "0.2"),
    ("run", "echo json", "--tab", "x", "--json"),
    ("last", "x"),
    ("last", "--tab", "x", "--json"),
    ("last", "--tab", "nowhere"),
    ("last", "--tab", "nowhere", "--json"),
    ("history", "x"),
    ("history", "x", "--json"),
    ("which", "x"),
    ("wait", "x", "--timeout-seconds", "1"),
    ("kill", "x"),
    ("rerun", "x"),
    ("close", "y"),
    ("scene", "--json"),
    ("run", "true", "--tab", "bad name"),
    ("run", ""),
    # HABITAT_MAX_TABS=2: with x and w open, z would be a third.
    ("run", "true", "--tab", "w"),
    ("run", "true", "--tab", "z"),
    ("run", "true", "--tab", "z", "--background"),
    # The project verbs the CLI has go the same way.
    ("project",),
    ("project", "--json"),
    ("trust",),
]
_FAST = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 21, 22, 23}
"""The cases the host path answers alone; the others are refused input, which the full path
names (a flag, the tab cap) after the host refused it."""


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "HABITAT_MAX_TABS": "2"}


def _habitat(project: Path, *argv: str) -> tuple[int, str, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv, "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=_CALL_TIMEOUT,
        env=_env(),
        check=False,
    )
    err, _, loaded = done.stderr.rpartition("loaded:")
    return done.returncode, done.stdout, err, loaded.strip()


def _answer(refused: FullPath, *argv: str) -> tuple[int, str, str, str]:
    """`_habitat`'s answer, from `refused`'s interpreter."""
    probed = refused(*argv)
    return probed.code, probed.stdout, probed.stderr, probed.loaded


_VARYING = [
    (re.compile(r"\d+\.\d\ds"), "N.NNs"),  # durations
    (re.compile(r"\(pid \d+\)|pid \d+"), "pid N"),
    (re.compile(r"cursor \d+"), "cursor N"),
]


def _same_text(text: str, project: Path) -> str:
    text = text.replace(str(project), "<project>")
    for pattern, fixed in _VARYING:
        text = pattern.sub(fixed, text)
    return text


def _same_json(text: str, project: Path) -> object:
    """The JSON's shape and the values that do not depend on time, pids or the folder."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {
                k: strip(v)
                for k, v in value.items()
                if k not in ("duration_s", "pid", "started_at", "spool", "cwd", "preview")
            }
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(text.replace(str(project), "<project>")))


def _in_process(
    capsys: pytest.CaptureFixture[str], project: Path, *argv: str
) -> tuple[int, str, str, str]:
    """`habitat ARGV` embedded, in this process (the host side's interpreters are of their
    own, which must show what they imported)."""
    code = main([*argv, "--project", str(project)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, ""


@pytest.mark.timeout(600)  # a host and 24 commands twice on a loaded 2-core machine
def test_every_shell_verb_prints_the_same_through_the_host_and_embedded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded_root = tmp_path / "embedded"
    hosted_root = tmp_path / "hosted"
    for root in (embedded_root, hosted_root):
        (root / ".git").mkdir(parents=True)
    for name, value in _env().items():
        if name in ("COLUMNS", "HABITAT_MAX_TABS"):
            monkeypatch.setenv(name, value)  # the host reads them at start too
    embedded = [_in_process(capsys, embedded_root, *case) for case in _CASES]
    try:
        ensure_host(hosted_root)
        # The cases the host path answers alone are answered by one interpreter, which says
        # after each what it has imported so far: nothing heavy after the last means none of
        # them loaded anything (19 fresh interpreters cost about 0.2 CPU-s each with coverage,
        # a quarter of the test). The refused ones (the full path names the flag or the cap
        # after the host refused them) are answered by another, in the cases' order.
        with (
            full_path(hosted_root, "", heavy=_HEAVY) as quick,
            full_path(hosted_root, "", heavy=_HEAVY) as refused,
        ):
            hosted = [
                _answer(quick if i in _FAST else refused, *case, "--project", str(hosted_root))
                for i, case in enumerate(_CASES)
            ]
    finally:
        stop_host(hosted_root)
    for i, (case, mine, theirs) in enumerate(zip(_CASES, embedded, hosted, strict=True)):
        (e_code, e_out, e_err, _), (h_code, h_out, h_err, h_loaded) = mine, theirs
        assert e_code == h_code, case
        if "--json" in case:
            if e_out:
                assert _same_json(e_out, embedded_root) == _same_json(h_out, hosted_root), case
            if e_err:
                assert json.loads(e_err) == json.loads(h_err), case
        else:
            assert _same_text(e_out, embedded_root) == _same_text(h_out, hosted_root), case
            assert _same_text(e_err, embedded_root) == _same_text(h_err, hosted_root), case
        if i in _FAST:
            assert h_loaded == "", f"{case} loaded {h_loaded} through the host"
    codes = [code for code, *_ in hosted]
    # `wait` and `rerun` follow x's last run, `echo json` (exit 0); `kill`: nothing runs (1).
    assert codes == [0, 3, 124, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2, 2, 0, 2, 2, 0, 0, 0], (
        hosted
    )
    assert hosted[0][1] == "hi\n"
    assert "exit 0 · N.NNs · tab x #1" in _same_text(hosted[0][2], hosted_root)


def _prepared(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> None:
    """The state a test starts from, made by `habitat ARGV` embedded (in this process: the
    state is the same, without an interpreter's start for it)."""
    code, _, err, _ = _in_process(capsys, root, *argv)
    assert code == 0, err


def test_the_tab_cap_is_one_line_and_exit_2_in_the_foreground_and_the_background(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "capped"
    (root / ".git").mkdir(parents=True)
    _prepared(capsys, root, "run", "true", "--tab", "a")
    _prepared(capsys, root, "run", "true", "--tab", "b")
    for extra in ((), ("--background",)):
        code, _, err, _ = _habitat(root, "run", "true", "--tab", "c", *extra)
        assert code == 2, err
        assert "Traceback" not in err
        assert "ExceptionGroup" not in err
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith("habitat: ")


def test_an_empty_command_names_the_positional_argument_not_a_flag(tmp_path: Path) -> None:
    code, _, err, _ = _habitat(tmp_path, "run", "")
    assert code == 2
    assert "--command" not in err
    assert err.startswith("habitat: COMMAND:")


def _into_closed_pipe(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`habitat ARGV | head -0`: the reader has gone before the first line is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "agent_habitat", *argv, "--project", str(root)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=_CALL_TIMEOUT,
            env=_env(),
            check=False,
        )
    finally:
        os.close(write)


def _reader_goes_away(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _prepared(capsys, root, "run", "echo one; echo two")
    for argv in (("last",), ("history",), ("scene",), ("run", "echo again")):
        done = _into_closed_pipe(root, *argv)
        assert "Traceback" not in done.stderr, argv
        assert "BrokenPipeError" not in done.stderr, argv
        assert done.returncode == 141, (argv, done.stderr)


def test_a_reader_that_goes_away_ends_the_command_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "piped"
    (root / ".git").mkdir(parents=True)
    try:
        _reader_goes_away(capsys, root)
    finally:
        stop_host(root)  # none should have started


def test_a_reader_that_goes_away_ends_the_command_quietly_through_the_host(
    shared_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reader_goes_away(capsys, shared_project)  # the module's host (tests/host/conftest.py)


def test_with_a_host_events_are_read_from_the_journal_as_the_full_path_prints_them(
    shared_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = shared_project  # the module's host: both paths read the same journal
    _prepared(capsys, root, "run", "echo one", "--tab", "a")
    _habitat(root, "run", "echo two", "--tab", "b")
    stand_down = "import agent_habitat.cli.events_fast as fast\nfast.fast_events = lambda a: None\n"
    # The full path's three answers from one interpreter (cli_probe.py), in `_habitat`'s
    # environment: each fresh one built the models again.
    for name in ("COLUMNS", "HABITAT_MAX_TABS"):
        monkeypatch.setenv(name, _env()[name])
    with full_path(root, stand_down, heavy=_HEAVY) as full:
        for extra in ((), ("--json",), ("--since", "2")):
            code, out, err, loaded = _habitat(root, "events", *extra)
            assert code == 0, err
            assert loaded == "", "read without the models"
            answer = full("events", *extra, "--project", str(root))
            assert answer.code == 0, answer.stderr
            assert "pydantic" in answer.loaded
            assert out == answer.stdout, extra
    assert "shell.run.exited" in out
