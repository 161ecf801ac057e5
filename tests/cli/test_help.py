"""Every flag of every command has one help line, and each command's help shows an example."""

from __future__ import annotations

import argparse

import pytest

from agent_habitat.cli import _MODULE_OF, build_parser


def _commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[prefix + name] = sub
                found.update(_commands(sub, prefix + name + " "))
    return found


_ALL = _commands(build_parser())


@pytest.mark.parametrize("name", sorted(_ALL))
def test_every_flag_and_positional_has_a_help_line(name: str) -> None:
    for action in _ALL[name]._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help, f"habitat {name}: {action.option_strings or action.dest} has no help"


@pytest.mark.parametrize("name", sorted(_MODULE_OF))
def test_each_command_help_shows_an_example(name: str) -> None:
    assert f"habitat {name}" in (_ALL[name].epilog or ""), f"habitat {name} --help: no example"
