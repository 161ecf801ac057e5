"""`habitat scene` answers from `state.db` alone when nothing needs doing, with the table (or
the JSON, previews included) the full path prints; whatever needs doing (a run to watch,
configuration, a process a run left running) takes the full path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.cli.scene_fast import SHELL_CONFIG_DEFAULTS
from agent_habitat.config import ShellConfig
from cli_probe import full_path

_HEAVY = ("pydantic", "anyio", "rich", "psutil", "agent_habitat.habitat")
_PROBE = (
    "import sys\nfrom agent_habitat.cli import main\ncode = main(sys.argv[1:])\n"
    f"heavy = {_HEAVY!r}\n"
    "print('loaded:', *[n for n in heavy if n in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)"
)


# A bound for a hung process, not a speed claim: the full path builds the habitat, about a
# CPU-second, which at load 40 on the 2-core machine is 20-40 s of wall.
_CALL_TIMEOUT = 180


def _scene(root: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PROBE, "scene", *argv, "--project", str(root)],
        capture_output=True,
        text=True,
        timeout=_CALL_TIMEOUT,
        check=True,
        # Wide enough for pytest's long paths: rich would fold a narrower table itself.
        env={**os.environ, "COLUMNS": "200", **env},
    )


def _habitat(root: Path, *argv: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "agent_habitat", *argv, "--project", str(root)],
        capture_output=True,
        # A host's start (the SDK, the habitat) took over 60 s of wall at load 20.
        timeout=_CALL_TIMEOUT,
        check=False,  # a run's exit code is its own
    )


def _prepared(capsys: pytest.CaptureFixture[str], root: Path, *argv: str, code: int = 0) -> None:
    """The runs a test starts from, made by `habitat ARGV` in this process: the state they
    leave is the same, without an interpreter's start for each."""
    assert main([*argv, "--project", str(root)]) == code, capsys.readouterr().err
    capsys.readouterr()


def test_the_fast_scene_prints_the_full_paths_table_without_building_the_habitat(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _prepared(capsys, project, "run", "echo one")
    _prepared(capsys, project, "run", "exit 3", "--tab", "build", code=3)
    # The JSON's previews: a secret typed in the command, escapes, a tail past the cap.
    _prepared(capsys, project, "run", "API_TOKEN=s3cr3t-value-1; echo $API_TOKEN", "--tab", "s")
    _prepared(capsys, project, "run", "printf 'a\\033[31mred\\033[0m\\n'; seq 2000", "--tab", "x")
    # A HABITAT_<field> variable (the default value here) sends it the full way: both of the
    # full path's answers from one interpreter (cli_probe.py), which builds the habitat once.
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("HABITAT_MAX_TABS", "8")
    tables = {}
    with full_path(project, "", heavy=_HEAVY) as full:
        monkeypatch.delenv("HABITAT_MAX_TABS")  # that interpreter's alone: it started with it
        for argv in ((), ("--json",)):
            fast = _scene(project, *argv)
            assert fast.stderr.strip() == "loaded:", argv
            answer = full("scene", *argv, "--project", str(project))
            assert answer.code == 0, answer.stderr
            assert "agent_habitat.habitat" in answer.loaded, argv
            assert fast.stdout == answer.stdout, argv
            tables[argv] = fast.stdout
    assert "`exit 3` → 3" in tables[()]
    assert "API_TOKEN=***" in fast.stdout
    assert '"preview": "' in fast.stdout
    assert "2000" in fast.stdout


# Runs until the test kills it: the calls between its start and its kill are fresh
# interpreters, which took over 30 s together at load 28 with 4 workers, and a `sleep 30`
# that ended alone was `→ 0`, not `→ killed`.
_LONG = "sleep 600"


def test_a_run_marked_running_takes_the_full_path_which_follows_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _habitat(project, "run", _LONG, "--tab", "srv", "--background")
    try:
        seen = _scene(project)
        assert "agent_habitat.habitat" in seen.stderr
        assert "running (pid" in seen.stdout
    finally:
        _prepared(capsys, project, "kill", "srv")
    after = _scene(project)
    assert after.stderr.strip() == "loaded:"  # the kill recorded its end: nothing to do
    assert f"#1 `{_LONG}` → killed" in after.stdout


def test_left_processes_and_configured_projects_take_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepared(capsys, project, "run", "echo one")
    _prepared(capsys, project, "run", "sleep 600 >/dev/null 2>&1 &", "--tab", "left")
    try:
        # Whether what it left still lives: the full path looks.
        seen = _scene(project, "--json")
        assert "agent_habitat.habitat" in seen.stderr
        assert '"command": "sleep 600"' in seen.stdout
    finally:
        _prepared(capsys, project, "kill", "left")
    (project / "pyproject.toml").write_text("[tool.habitat.shell]\nmax_tabs = 3\n", "utf-8")
    configured = _scene(project)
    assert "2/3 tabs" in configured.stdout
    (project / "pyproject.toml").write_text("[tool.habitat\n", "utf-8")
    broken = subprocess.run(
        [sys.executable, "-m", "agent_habitat", "scene", "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=_CALL_TIMEOUT,
        check=False,
    )
    assert broken.returncode == 2  # configuration to fix, as documented
    assert "not valid TOML" in broken.stderr


def test_the_fast_paths_config_defaults_are_shell_configs() -> None:
    assert ShellConfig().model_dump() == SHELL_CONFIG_DEFAULTS


_DURATION = re.compile(r"\(\d+\.\d+s\)")
_BOX = str.maketrans("", "", "━┏┳┓┃┡╇┩│└─┴┘")


def _cells(table: str) -> list[str]:
    return _DURATION.sub("(…s)", table).translate(_BOX).split()


_FULL_PATH = (
    "import agent_habitat.cli.scene_fast as fast\nfast.fast_scene = lambda argv: None\n"
    "import agent_habitat.cli.host_verbs as quick\nquick.host_verb = lambda argv: None\n"
)


def test_with_a_host_the_scene_is_the_hosts_asked_over_its_socket(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _habitat(project, "host", "start")
    try:
        # Through the host (it serves the workspace): a run only the host watches.
        _habitat(project, "run", _LONG, "--tab", "srv", "--background")
        fast = _scene(project)
        assert fast.stderr.strip() == "loaded:", "asked without the models, httpx or rich"
        assert "running (pid" in fast.stdout
        full = subprocess.run(
            [sys.executable, "-c", _FULL_PATH + _PROBE, "scene", "--project", str(project)],
            capture_output=True,
            text=True,
            timeout=_CALL_TIMEOUT,
            check=True,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert "pydantic" in full.stderr
        # The same table; a running run's duration grows between the two calls (and with
        # it, maybe, the column's width).
        assert _cells(fast.stdout) == _cells(full.stdout)
    finally:
        _prepared(capsys, project, "kill", "srv")
        _prepared(capsys, project, "host", "stop")
    after = _scene(project)  # the host is gone: the state is read directly again
    assert after.stderr.strip() == "loaded:"
    assert f"#1 `{_LONG}` → killed" in after.stdout
