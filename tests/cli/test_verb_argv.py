"""The host path reads a shell verb's command line as the full parser does, without the
verb table's models; what it does not read plainly it leaves to the full parser."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest

from agent_habitat.cli import _HOST_VERBS, build_parser
from agent_habitat.cli.flags import argument_specs, request_from
from agent_habitat.cli.verb_argv import ARGUMENTS, PROJECT_ARGUMENTS, read_argv
from agent_habitat.verbs import VERBS


def _named(spec: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in spec.items():
        if value is argparse.BooleanOptionalAction:
            value = "BooleanOptionalAction"
        elif isinstance(value, type):
            value = value.__name__
        out[key] = value
    return out


def test_the_copy_of_each_verbs_arguments_is_what_the_table_derives() -> None:
    derived = {
        verb.cli_name: [(names, _named(spec)) for names, spec in argument_specs(verb)]
        for verb in VERBS
        if verb.cli and verb.group == "shell"
    }
    assert derived == ARGUMENTS, "update cli/verb_argv.ARGUMENTS to what the table derives"
    assert set(ARGUMENTS) == _HOST_VERBS
    projects = {
        verb.cli_name: [(names, _named(spec)) for names, spec in argument_specs(verb)]
        for verb in VERBS
        if verb.cli and verb.group == "project"
    }
    assert projects == PROJECT_ARGUMENTS


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "echo hi"],
        ["run", "make -j2", "build", "--timeout-seconds", "600"],
        ["run", "env", "--env", "A=1", "--env", "B=x=y", "--cwd", "/tmp", "--json"],
        ["run", "sleep 9", "--tab", "srv", "--background", "--yield-after-seconds", "1"],
        ["last", "web", "--tail-lines", "20", "--grep", "error|warn"],
        ["last", "--tab", "web", "--since", "120"],
        ["history", "build", "--limit", "5"],
        ["rerun", "--index", "3"],
        ["kill", "web", "--signal", "INT"],
        ["wait", "web", "--until", "ready", "--timeout-seconds", "60"],
        ["input", "repl", "print(1)\n", "--eof"],
        ["which"],
        ["close", "web"],
        ["scene", "--json"],
    ],
)
def test_a_plain_command_line_reads_as_the_full_parser_reads_it(argv: list[str]) -> None:
    call = read_argv(argv)
    assert call is not None
    args = build_parser(argv[0]).parse_args(argv)
    verb = next(v for v in VERBS if v.cli and v.cli_name == argv[0] and v.group == "shell")
    expected = request_from(verb, args).model_dump(exclude_unset=True)
    assert verb.args.model_validate(call.body).model_dump(exclude_unset=True) == expected
    assert call.json == bool(args.json)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--help"],
        ["last", "-h"],
        ["run"],  # COMMAND missing: the full parser says so
        ["run", "x", "--bogus"],
        ["run", "x", "--timeout-seconds", "soon"],
        ["kill", "a", "--tab", "b"],  # the tab twice
        ["run", "env", "--env", "NOEQUALS"],
        ["verify"],
        [],
    ],
)
def test_what_is_not_plain_is_left_to_the_full_parser(argv: list[str]) -> None:
    assert read_argv(argv) is None


def test_reading_a_command_line_imports_no_model_and_no_rich() -> None:
    code = (
        "import sys\nfrom agent_habitat.cli.verb_argv import read_argv\n"
        "import agent_habitat.cli.host_verbs\n"
        "read_argv(['run', 'echo hi', '--tab', 'x'])\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    for name in ("pydantic", "rich", "anyio", "httpx2", "psutil", "agent_habitat.verbs"):
        assert name not in loaded, name


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "echo hi"],
        ["run", "echo hi", "build", "--json", "--project", "/tmp"],
        ["run", "x", "--tab=b", "--timeout-seconds=1.5", "--env", "A=1", "--env=B=2"],
        ["run", "x", "--background", "--background", "--tab", "a", "--tab", "b"],
        ["run", "x", "--grep", "y"],  # not a flag of run
        ["run", "--json", "echo hi"],  # a positional after a flag
        ["run", "echo hi", "--tab"],  # a flag without its value
        ["run", "echo hi", "--tab", "-x"],
        ["run", "x", "--json=1"],
        ["run", "-"],
        ["run", "--", "ls"],
        ["run", "x", "--tim", "3"],  # abbreviated
        ["run", "x", "--timeout-seconds", "-1"],
        ["run", "a", "b", "c"],
        ["last", "web", "--tail-lines", "20", "--grep", "error|warn"],
        ["last", "--json", "web"],
        ["last", "--index", "x"],
        ["history", "--limit", "5"],
        ["input", "x"],
        ["input", "repl", "x", "--eof"],
        ["input"],
        ["wait", "web", "--until=ready", "--timeout-seconds", "inf"],
        ["scene"],
        ["scene", "extra"],
    ],
)
def test_the_plain_reading_agrees_with_argparse_or_leaves_the_line_to_it(argv: list[str]) -> None:
    from agent_habitat.cli import verb_argv

    try:
        plain: dict[str, Any] | None = verb_argv._plainly(argv[0], argv[1:])
    except verb_argv._Unsure:
        return  # argparse reads it (the tests above hold that reading to the full parser's)
    try:
        parsed: dict[str, Any] | None = verb_argv._with_argparse(argv[0], argv[1:])
    except verb_argv._Refused:
        parsed = None
    assert plain == parsed
