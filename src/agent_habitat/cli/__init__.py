"""`habitat …` — a thin CLI over the same services the MCP tools call.

Each module in `_COMMAND_MODULES` has `register(subparsers)`; a subcommand sets
`handler=fn(args) -> int` (the exit code). The shell verbs come from the verb table
(`agent_habitat.verbs`). Usage errors exit 2; with `--json` every error is a JSON object
`{"error": …, "field": …}` on stderr, with the same exit codes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from .common import JSON_ERRORS

__all__ = ["main"]

_COMMAND_MODULES = (
    "agent_habitat.cli.shell_cmds",
    "agent_habitat.cli.events_cmd",
    "agent_habitat.cli.demo_cmd",
    "agent_habitat.cli.mcp_cmds",
    "agent_habitat.cli.verify_cmds",
    "agent_habitat.cli.rules_cmd",
    "agent_habitat.cli.init_cmd",
    "agent_habitat.cli.host_cmd",
    "agent_habitat.cli.dashboard_cmd",
)


class _Parser(argparse.ArgumentParser):
    """Bad command lines are JSON errors too when `--json` was asked for."""

    def error(self, message: str) -> NoReturn:
        if JSON_ERRORS.get():
            sys.stderr.write(json.dumps({"error": message, "field": None}) + "\n")
            self.exit(2)
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="habitat",
        description="Shell tabs and a verification ladder shared by a coding agent and a person.",
    )
    parser.add_argument("--version", action="version", version=f"agent-habitat {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a command module that is not part of this build
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    JSON_ERRORS.set("--json" in argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    JSON_ERRORS.set(bool(getattr(args, "json", False)))
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
