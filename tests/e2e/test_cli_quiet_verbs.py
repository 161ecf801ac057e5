"""`habitat history|last|which|wait|kill` with no host read `state.db` alone when opening the
habitat would do nothing more, and print what the full path prints (stdout, stderr, exit
code); a run marked running, configuration, a missing tab, a flag the reader leaves and a
process an ended run left running take the full path."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from agent_habitat.cli import main
from cli_probe import Probed, full_path, probe

_FULL = "import agent_habitat.cli.quiet_verbs as quiet\nquiet.quiet_verb = lambda c, r: None\n"
"""The full path alone: the quiet reader stood down."""


_ANSWERED = "the quiet reader answered"
_TOLD = (
    "import sys\nimport agent_habitat.cli.quiet_verbs as quiet\n_verb = quiet.quiet_verb\n"
    "def _told(call, root):\n    code = _verb(call, root)\n    if code is not None:\n"
    f"        print({_ANSWERED!r}, file=sys.stderr)\n    return code\n"
    "quiet.quiet_verb = _told\n"
)
"""The quiet reader left on, saying on stderr each time it answered a command itself."""


def _cli(root: Path, *argv: str, **env: str) -> Probed:
    return probe(root, *argv, "--project", str(root), **env)


def _prepared(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> None:
    main([*argv, "--project", str(root)])
    capsys.readouterr()


_FAILED_LOUD = "seq -f 'build line %g' 3000; echo 'error: it broke'; seq -f 'tail %g' 3000; exit 3"
"""A failed run whose error line the 16 KiB cap leaves out (`error_lines` carries it)."""


def test_with_no_host_history_last_and_which_read_as_the_full_path_prints_them(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepared(capsys, project, "run", "echo one")
    _prepared(capsys, project, "run", "API_TOKEN=s3cr3t-value-1 echo two", "--tab", "b")
    _prepared(capsys, project, "run", _FAILED_LOUD, "--tab", "b")
    _prepared(capsys, project, "run", "printf 'x\\033[31mred\\033[0m\\n'; kill -INT $$")
    # Each path's answers from one interpreter (cli_probe.py), the quick one's after each
    # what it has loaded so far: nothing heavy after the last means no quick answer loaded
    # anything (a fresh interpreter for each cost about 0.2 CPU-s with coverage).
    with full_path(project, "") as reader, full_path(project, _FULL) as answer:
        for argv in (
            ("history",),
            ("history", "--json"),
            ("history", "b", "--limit", "1"),
            ("history", "--tab", "b", "--json"),
            ("last",),
            ("last", "--json"),
            ("last", "b"),
            ("last", "b", "--json"),
            ("last", "b", "--index", "1", "--json"),
            ("last", "--index", "1", "--since", "2"),
            ("which",),
            ("which", "b", "--json"),
            ("wait",),  # ended by a signal
            ("wait", "b", "--json", "--timeout-seconds", "5"),  # failed, its error line cut
            ("kill", "main"),
            ("kill", "b", "--json", "--signal", "9"),
            ("kill", "--tab", "b", "--signal", "int"),
        ):
            quick = reader(*argv, "--project", str(project))
            assert quick.loaded == "", argv  # neither pydantic, anyio nor the habitat
            full = answer(*argv, "--project", str(project))
            assert "agent_habitat.habitat" in full.loaded, argv
            assert quick.answer() == full.answer(), argv
    assert "error: it broke" in _cli(project, "last", "b", "--json").stdout


def test_what_the_quiet_reader_leaves_takes_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepared(capsys, project, "run", "echo one")
    # What the reader leaves, from one interpreter that says when the reader answered (a
    # fresh one for each built the habitat each time, and at load 40 this test's chain of
    # them ran into the 180 s hang guard); what the environment or a run still going
    # decides stays in fresh interpreters, as a user's command runs.
    with full_path(project, _TOLD) as reader:
        for argv in (
            ("history", "nosuch"),  # the refusal names the open tabs
            ("last", "--index", "9"),
            ("last", "--tail-lines", "1"),
            ("history", "--limit", "0"),  # the model's words name the flag
            ("wait", "--until", "one"),  # the full path searches the output
            ("wait", "--timeout-seconds", "0"),
            ("kill", "nosuch"),
            ("kill", "main", "--signal", "NOPE"),
            ("kill",),  # the tab is required
        ):
            left = reader(*argv, "--project", str(project))
            assert _ANSWERED not in left.stderr, argv
            assert "agent_habitat.habitat" in left.loaded or "pydantic" in left.loaded, argv
            if argv == ("history", "nosuch"):
                assert left.code == 1
        assert _ANSWERED in reader("history", "--project", str(project)).stderr  # it speaks
    configured = _cli(project, "history", HABITAT_IDLE_SECONDS="60")
    assert "agent_habitat.habitat" in configured.loaded
    _prepared(capsys, project, "run", "sleep 600", "--tab", "srv", "--background")
    try:
        # A run marked running: the full path looks whether it ended, and records it.
        seen = _cli(project, "history", "srv")
        assert "agent_habitat.habitat" in seen.loaded
        assert "sleep 600" in seen.stdout
    finally:
        _prepared(capsys, project, "kill", "srv")
    after = _cli(project, "history", "srv")
    assert after.loaded == ""  # the kill recorded its end: nothing to do
    assert "killed" in after.stdout
    # An ended run that left a process running: `kill` and `close` stop it on the full path.
    _prepared(capsys, project, "run", "sleep 600 >/dev/null 2>&1 &", "--tab", "gone")
    closed = _cli(project, "close", "gone")
    assert "agent_habitat.habitat" in closed.loaded
    assert closed.stdout == "closed gone (killed its command)\n"
    _prepared(capsys, project, "run", "sleep 600 >/dev/null 2>&1 &", "--tab", "left")
    stopped = _cli(project, "kill", "left", "--json")
    assert "agent_habitat.habitat" in stopped.loaded
    assert stopped.code == 0, stopped.stderr
    assert '"killed": true' in stopped.stdout
    again = _cli(project, "kill", "left")
    assert again.loaded == ""  # nothing left on record
    assert again.code == 1
    assert again.stdout == "tab left: nothing running\n"


def test_the_copies_the_quiet_path_keeps_match_their_originals(project: Path) -> None:
    from agent_habitat.cli import quiet_run, quiet_state, quiet_verbs, scene_fast
    from agent_habitat.config import ShellConfig
    from agent_habitat.errors import UsageError
    from agent_habitat.limits import INDEX_MAX
    from agent_habitat.proc.signals import parse_signal
    from agent_habitat.shell import leftovers, quiet_reads
    from agent_habitat.shell.models import HistoryArgs, WaitArgs
    from agent_habitat.verify.runner.config import RunnerConfig
    from agent_habitat.workspace import Workspace

    assert Workspace.for_project(project).db_path.name == quiet_state._DB_NAME
    # The substrate's table is read from pyproject.toml alone (not `HABITAT_SUBSTRATE_*`).
    fields = set(RunnerConfig.model_fields) - {"substrate"}
    assert fields == set(scene_fast.RUNNER_CONFIG_FIELDS)
    assert ShellConfig().output_cap_bytes == quiet_verbs._OUTPUT_CAP_BYTES
    limit = HistoryArgs.model_fields["limit"]
    bounds = {type(m).__name__: m for m in limit.metadata}
    assert (bounds["Ge"].ge, bounds["Le"].le) == quiet_verbs._HISTORY_LIMIT
    assert limit.default == quiet_verbs._HISTORY_DEFAULT
    wait = WaitArgs.model_fields["timeout_seconds"]
    bounds = {type(m).__name__: m for m in wait.metadata}
    assert (bounds["Gt"].gt, bounds["Le"].le) == quiet_verbs._WAIT_SECONDS
    assert quiet_reads._LEFT_FILE == leftovers._FILE
    assert quiet_run._INDEX_MAX == INDEX_MAX
    for value in ("TERM", "term", "SIGkill", "9", "15", "int", "IOT", "0", "999", "NOPE", "", "x1"):
        try:
            expected: str | None = signal.Signals(parse_signal(value)).name
        except UsageError:
            expected = None
        assert quiet_verbs.signal_name(value) == expected, value
    for name in ("main", "a.b-c_9", "x" * 32, "", "x" * 33, "a b", "é", "a/b"):
        try:
            HistoryArgs(tab=name)
        except ValueError:
            valid = False
        else:
            valid = True
        assert quiet_verbs.tab_name(name) == valid, name
