"""`habitat VERB --help` for a shell or project verb, without the verb table's models.

The full parser derives a verb's subcommand from its row and args model (`cli.flags`), which
costs pydantic, the shell's models and the project's scene (a quarter of a second of CPU) to
print a page of text. `cli.verb_argv` keeps a copy of those arguments with their help texts
and the rows' examples (a test keeps it equal to what the table derives), so the same
argparse subcommand is built here from it, with the same parser class and calls: its help is
the full parser's, byte for byte at any width (a test compares them). Only the help is
answered here; a command line that fails before its `--help` is read, or has none after all
(`habitat run -- --help`), goes to the full parser, which says it in its own words.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from .parser import HabitatParser
from .verb_argv import ARGUMENTS, EXAMPLES, PROJECT_ARGUMENTS, add_arguments, add_common

__all__ = ["verb_help"]


class _NotHelp(Exception):
    """The command line is not a plain request for help: the full parser answers it."""


class _HelpParser(HabitatParser):
    def error(self, message: str) -> NoReturn:
        raise _NotHelp(message)


def help_parser(command: str, summary: str) -> argparse.ArgumentParser:
    """`habitat COMMAND`'s subcommand parser, as `cli.flags.add_verb_parser` builds it."""
    parser = _HelpParser(prog="habitat")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub: argparse.ArgumentParser = subparsers.add_parser(
        command,
        help=summary,
        description=summary[:1].upper() + summary[1:] + ".",
        epilog=f"example:\n  {EXAMPLES[command]}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(sub, {**ARGUMENTS, **PROJECT_ARGUMENTS}[command])
    add_common(sub)
    return parser


def verb_help(argv: list[str], summary: str) -> int | None:
    """Print `habitat ARGV`'s help and return its exit code when `argv` (`run --help`) asks
    for it, as the full parser would; None when the full parser should read `argv`."""
    try:
        help_parser(argv[0], summary).parse_args(argv)
    except _NotHelp:
        return None
    except SystemExit as exc:  # argparse's help action prints, then exits 0
        return exc.code if isinstance(exc.code, int) else 0
    return None
