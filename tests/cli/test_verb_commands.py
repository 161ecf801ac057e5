"""The verb table drives the CLI subcommands: flags from the args models, help, the tab."""

from __future__ import annotations

import argparse

import pytest

from agent_habitat.cli import build_parser
from agent_habitat.cli.flags import request_from
from agent_habitat.verbs import VERBS, AnyVerb, verb


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_cli_row_is_a_habitat_subcommand_and_no_other_verb_is() -> None:
    commands = _subcommands()
    for row in VERBS:
        # The verify rows' commands are hand-made (cli/verify_cmds.py: a live display).
        assert (row.cli_name in commands) is (row.cli or row.group == "verify"), row.name
    assert [row.tool_name(row.group) for row in VERBS if not row.cli] == [
        "project_open",
        "file_write",
        "file_edit",
        "verify_run",
        "verify_status",
        "verify_cancel",
    ]


@pytest.mark.parametrize("row", [r for r in VERBS if r.cli], ids=lambda r: r.cli_name)
def test_each_field_is_a_flag_with_a_help_line_and_help_shows_an_example(
    row: AnyVerb, capsys: pytest.CaptureFixture[str]
) -> None:
    command = _subcommands()[row.cli_name]
    flags = {opt for action in command._actions for opt in action.option_strings}
    for name, field in row.args.model_fields.items():
        if name not in row.positional or name == "tab":
            assert "--" + name.replace("_", "-") in flags
        assert field.description, f"{row.name}.{name} needs a description (its help line)"
    assert {"--json", "--project"} <= flags
    with pytest.raises(SystemExit):
        build_parser().parse_args([row.cli_name, "--help"])
    assert f"example:\n  habitat {row.cli_name}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "row", [r for r in VERBS if r.cli and "tab" in r.args.model_fields], ids=lambda r: r.name
)
def test_the_tab_is_accepted_as_a_positional_and_as_a_flag(row: AnyVerb) -> None:
    positional = ["web" if name == "tab" else "x" for name in row.positional]
    flagged = [*("x" for name in row.positional if name != "tab"), "--tab", "web"]
    for argv in (positional, flagged):
        request = request_from(row, build_parser().parse_args([row.name, *argv]))
        assert request.model_dump()["tab"] == "web"


def test_every_verb_with_a_tab_takes_it_positionally() -> None:
    assert all("tab" in r.positional for r in VERBS if r.cli and "tab" in r.args.model_fields)


def test_rows_are_found_by_name_and_group() -> None:
    assert verb("run").tool_name("terminal") == "terminal_run"
    assert verb("open", "project").tool_name("shell") == "project_open"
    with pytest.raises(KeyError, match=r"no verb shell\.nothing"):
        verb("nothing")
