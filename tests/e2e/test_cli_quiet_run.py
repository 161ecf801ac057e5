"""`habitat run` with no host starts the run in the CLI's process and, when it is over in its
first moment, records it there (`shell.quiet_run`) without pydantic, anyio or the habitat:
the same stdout, stderr and exit code as the full path, and the same rows, events and run
folders in `state.db` and the spool, so `last`, `history`, a later host and the dashboard
see the run as before. A run still going after that moment is handed to the full path,
which follows it from there; a refusal (the tab limit) is the full path's own.

Two projects side by side, one answered by the quick path and one by the full path (the
quick path stood down), the same commands in the same order; what differs by nature (pids,
durations, times, the projects' own paths) is set aside before the comparison."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.cli import main
from agent_habitat.workspace import Workspace
from cli_probe import PROBE, Probed, full_path, probe

_FULL = "import agent_habitat.cli.quiet_run as quiet\nquiet.quiet_run = lambda c, r: None\n"
"""The full path alone: the quick run stood down."""
_SLOW_WINDOW = "import agent_habitat.shell.quiet_run as q\nq.QUICK_SECONDS = 30.0\n"
"""A first moment long enough that a quick command is quick on a loaded machine too."""
_NO_WINDOW = (
    "import agent_habitat.proc.supervised as s\ns.Supervised.wait_within = lambda p, t: None\n"
)
"""No run is seen to end in its first moment: every one is handed to the full path."""


def _twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two projects of one name (their paths differ, their text does not once set aside)."""
    pair = []
    for side in ("one", "two"):  # of one length: the outputs that print them too
        root = tmp_path / side / "project"
        (root / "sub").mkdir(parents=True)
        pair.append(root)
    return pair[0], pair[1]


def _prepared(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    """A first run (the full path: no state.db yet), so the quick path has a state to use."""
    main(["run", "true", "--project", str(root)])
    capsys.readouterr()


def _masked(text: str, root: Path) -> str:
    state = str(Workspace.for_project(root).state_dir)
    text = text.replace(state, "<STATE>").replace(str(root.resolve()), "<ROOT>")
    text = re.sub(r"\d+\.\d+s\b", "<T>s", text)
    text = re.sub(r'"(duration_s|started_at)": [\d.]+', r'"\1": <T>', text)
    return re.sub(r'"pid": \d+', '"pid": <PID>', text)


def _answer(probed: Probed, root: Path) -> tuple[int, str, str]:
    return probed.code, _masked(probed.stdout, root), _masked(probed.stderr, root)


def _same_records(quick_root: Path, full_root: Path) -> None:
    quick, full = _recorded(quick_root), _recorded(full_root)
    for part in ("runs", "tabs", "events"):
        assert len(quick[part]) == len(full[part]), part
        for mine, theirs in zip(quick[part], full[part], strict=True):
            assert mine == theirs, part


def _recorded(root: Path) -> dict[str, list[Any]]:
    """What the runs left in `state.db` and the spool, the natural differences set aside."""
    workspace = Workspace.for_project(root)
    db = sqlite3.connect(workspace.db_path)
    db.row_factory = sqlite3.Row
    try:
        runs = [
            {
                **{k: _masked(str(row[k]), root) for k in row.keys() if k not in _NATURAL},
                "pid": row["pid"] is not None,
                "ended": row["ended_at"] is not None and row["ended_at"] >= row["started_at"],
                "run_dir": os.path.basename(row["run_dir"]),
                "files": sorted(set(os.listdir(row["run_dir"])) - {"keeper.lock"}),
            }
            for row in db.execute("SELECT * FROM runs ORDER BY id")
        ]
        tabs = [
            {k: _masked(str(row[k]), root) for k in row.keys() if k != "created_at"}
            for row in db.execute("SELECT * FROM tabs ORDER BY name")
        ]
        events = [
            (
                row["kind"],
                row["tab"],
                row["task"],
                _masked(row["workspace"], root),
                _event(row, root),
            )
            for row in db.execute("SELECT * FROM events ORDER BY id")
        ]
    finally:
        db.close()
    return {"runs": runs, "tabs": tabs, "events": events}


_NATURAL = frozenset({"id", "pid", "create_time", "started_at", "ended_at", "run_dir"})


def _event(row: sqlite3.Row, root: Path) -> str:
    data = json.loads(row["data_json"])
    data.pop("pid", None)
    data.pop("duration_s", None)
    return _masked(json.dumps(data, sort_keys=True), root)


_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("run", "echo hi"),
    ("run", "echo err >&2; exit 3"),
    ("run", "cd sub && export HABITAT_TEST_CARRIED=yes"),
    ("run", "pwd; echo $HABITAT_TEST_CARRIED"),
    ("run", "API_TOKEN=s3cr3t-value-1 echo two", "--tab", "b"),
    ("run", "printf 'a\\033[31mred\\033[0m\\n'", "--json"),
    ("run", "seq -f 'build line %g' 3000; echo 'error: it broke'; seq 3000; exit 2", "--tab", "b"),
    ("run", "seq 3000 | tail -1", "b", "--json"),
    ("run", "echo again", "--tab", "c"),
    ("rerun",),
    ("rerun", "--index", "1", "--json"),
    ("rerun", "b", "--index", "1"),
    ("run", "echo last", "--tab", "d"),
    ("close", "d", "--json"),
    ("close", "c"),
)
"""Quick commands: a new tab, a failure, a cwd and a variable carried to the next run, a
secret, escapes, a failure whose error line the cap leaves out, the tab as a positional,
history entries run again (the last, one by index, one with a secret), tabs closed."""


def test_a_quick_run_with_no_host_prints_and_records_what_the_full_path_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quick_root, full_root = _twins(tmp_path)
    _prepared(capsys, quick_root)
    _prepared(capsys, full_root)
    # Each side's commands from one interpreter (cli_probe.py), which says after each what it
    # has loaded so far: nothing heavy after the last means no quick run loaded anything (a
    # fresh interpreter for each cost about 0.2 CPU-s with coverage, most of the quick run).
    with full_path(full_root, _FULL) as full, full_path(quick_root, _SLOW_WINDOW) as quick:
        for argv in _COMMANDS:
            mine = quick(*argv, "--project", str(quick_root))
            assert mine.loaded == "", argv  # neither pydantic, anyio nor the habitat
            answer = full(*argv, "--project", str(full_root))
            assert "agent_habitat.habitat" in answer.loaded, argv
            assert _answer(mine, quick_root) == _answer(answer, full_root), argv
    _same_records(quick_root, full_root)
    # What a later command reads of the quick runs: the same as of the full path's.
    with full_path(full_root, _FULL) as full:
        for argv in (("history", "--json"), ("last", "b"), ("last", "--index", "4", "--json")):
            mine = probe(quick_root, *argv, "--project", str(quick_root))
            answer = full(*argv, "--project", str(full_root))
            assert _answer(mine, quick_root) == _answer(answer, full_root), argv


def test_a_run_past_its_first_moment_is_followed_by_the_full_path_as_it_follows_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quick_root, full_root = _twins(tmp_path)
    _prepared(capsys, quick_root)
    _prepared(capsys, full_root)
    with full_path(full_root, _FULL) as full:
        for argv in (
            ("run", "echo early; sleep 0.3; echo late; exit 4"),
            ("run", "sleep 0.2; echo done", "--json"),
            ("run", "echo handed", "--tab", "t"),
        ):
            handed = probe(quick_root, *argv, "--project", str(quick_root), prelude=_NO_WINDOW)
            assert "agent_habitat.habitat" in handed.loaded, argv
            answer = full(*argv, "--project", str(full_root))
            assert _answer(handed, quick_root) == _answer(answer, full_root), argv
    _same_records(quick_root, full_root)


def test_a_refusal_or_bad_input_is_the_full_path_s_own_and_records_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quick_root, full_root = _twins(tmp_path)
    _prepared(capsys, quick_root)
    _prepared(capsys, full_root)
    # The quick side's commands from one interpreter too: a refusal there is the full path's
    # (the habitat built in a fresh interpreter for each cost about 0.6 CPU-s with coverage).
    with full_path(full_root, _FULL) as full, full_path(quick_root, _SLOW_WINDOW) as quick:
        for n in range(1, 8):  # `main` and seven more: the limit of 8 tabs
            opening = ("run", "true", "--tab", f"t{n}")
            assert quick(*opening, "--project", str(quick_root)).code == 0
            assert full(*opening, "--project", str(full_root)).code == 0
        refused: tuple[tuple[str, ...], ...] = (
            ("run", "true", "--tab", "ninth"),
            ("run", "true", "--tab", "ninth", "--json"),
            ("run", ""),  # bad input: the model's words, or the service's
            ("run", "   ", "--json"),
            ("run", "true", "--tab", "a b"),
            ("run", "true", "--tab", "x" * 33),
        )
        for argv in refused:
            mine = quick(*argv, "--project", str(quick_root))
            answer = full(*argv, "--project", str(full_root))
            assert mine.code == 2, (argv, mine.stderr)
            assert _answer(mine, quick_root) == _answer(answer, full_root), argv
            if argv[-1] == "ninth":
                assert "tab limit reached" in mine.stderr
    _same_records(quick_root, full_root)


def test_the_copies_the_quick_run_keeps_match_their_originals() -> None:
    from agent_habitat.cli import quiet_run as cli_quiet_run
    from agent_habitat.limits import MAX_ARG_BYTES
    from agent_habitat.shell import follow, leftovers
    from agent_habitat.shell import quiet_run as shell_quiet_run

    assert shell_quiet_run.QUICK_SECONDS == follow.QUICK_SECONDS
    assert shell_quiet_run._LEFT_FILE == leftovers._FILE
    assert cli_quiet_run._MAX_ARG_BYTES == MAX_ARG_BYTES


def _started(root: Path, argv: tuple[str, ...], prelude: str) -> subprocess.Popen[str]:
    """`habitat ARGV` in a fresh interpreter, left running: returned once its run's row has
    its process (the run is going)."""
    process = subprocess.Popen(
        [sys.executable, "-c", prelude + PROBE, *argv, "--project", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    deadline = time.monotonic() + 120  # a bound for a hung start, not a pace
    db = Workspace.for_project(root).db_path
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"ended early: {process.communicate()}")
        with contextlib.closing(sqlite3.connect(db)) as conn:
            row = conn.execute("SELECT pid FROM runs WHERE state = 'running'").fetchone()
        if row is not None and row[0] is not None:
            return process
        time.sleep(0.01)  # a bounded poll of another process's database
    process.kill()
    raise AssertionError("the run never started")


def test_ctrl_c_in_a_run_s_first_moment_cancels_it_as_the_full_path_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quick_root, full_root = _twins(tmp_path)
    _prepared(capsys, quick_root)
    _prepared(capsys, full_root)
    argv = ("run", "sleep 60")  # no output: the full path's streamer may have shown it
    answers = []
    for root, prelude in ((quick_root, _SLOW_WINDOW), (full_root, _FULL)):
        process = _started(root, argv, prelude)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)  # a bound, not a pace
        said, _, loaded = err.rpartition("\nloaded:")
        assert "agent_habitat.habitat" in loaded  # the cancel is the full path's
        answers.append((process.returncode, _masked(out, root), _masked(said, root)))
    assert answers[0] == answers[1]
    assert answers[0][0] == 130
    _same_records(quick_root, full_root)
    assert _recorded(quick_root)["runs"][-1]["state"] == "cancelled"
