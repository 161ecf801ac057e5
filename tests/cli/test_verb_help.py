"""`habitat VERB --help` for a shell or project verb is the full parser's help, printed
without the verb table's models; what is not plainly help goes to the full parser."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys

import pytest

from agent_habitat.cli import _LIGHT_VERBS, _SUMMARY, build_parser, main
from agent_habitat.cli.common import add_common
from agent_habitat.cli.verb_argv import EXAMPLES
from agent_habitat.cli.verb_argv import add_common as light_common
from agent_habitat.cli.verb_help import help_parser, verb_help
from agent_habitat.verbs import VERBS


def _sub(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sub: argparse.ArgumentParser = commands.choices[command]
    return sub


@pytest.mark.parametrize("columns", ["80", "44", "200"])
def test_each_verbs_help_is_the_full_parsers_at_any_width(
    columns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    for command in sorted(_LIGHT_VERBS):
        full = _sub(build_parser(command), command)
        light = _sub(help_parser(command, dict(_SUMMARY)[command]), command)
        assert light.format_help() == full.format_help(), command
        assert light.format_usage() == full.format_usage(), command


def test_the_examples_and_common_flags_are_the_rows_and_the_full_parsers() -> None:
    rows = {verb.cli_name: verb.example for verb in VERBS if verb.cli_name in _LIGHT_VERBS}
    assert rows == EXAMPLES
    full, light = argparse.ArgumentParser(prog="x"), argparse.ArgumentParser(prog="x")
    add_common(full)
    light_common(light)
    assert light.format_help() == full.format_help()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--help"],
        ["last", "web", "-h"],
        ["kill", "--help", "--json"],
        ["trust", "--help"],
    ],
)
def test_help_is_printed_and_exits_0_as_the_full_parser_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    light = io.StringIO()
    with contextlib.redirect_stdout(light):
        assert verb_help(argv, dict(_SUMMARY)[argv[0]]) == 0
    full = io.StringIO()
    with contextlib.redirect_stdout(full), pytest.raises(SystemExit) as exit_:
        build_parser(argv[0]).parse_args(argv)
    assert exit_.value.code == 0
    assert light.getvalue() == full.getvalue()
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert main(argv) == 0
    assert said.getvalue() == full.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "--limit", "x", "--help"],  # an error before the help is read
        ["run", "--cwd", "--help"],  # --help is taken as a missing value
        ["run", "--", "--help"],  # a command called --help
        ["run", "echo hi"],  # no help at all
    ],
)
def test_what_is_not_plainly_help_is_left_to_the_full_parser(argv: list[str]) -> None:
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        assert verb_help(argv, dict(_SUMMARY)[argv[0]]) is None
    assert quiet.getvalue() == ""


def test_a_verbs_help_imports_no_model_nor_the_habitat() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    code = (
        "import contextlib, io, sys\n"
        "from agent_habitat.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): assert main(['run', '--help']) == 0\n"
        "print('\\n'.join(sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    loaded = set(out.split())
    for name in ("pydantic", "anyio", "agent_habitat.verbs", "agent_habitat.habitat", "shutil"):
        assert name not in loaded, name
