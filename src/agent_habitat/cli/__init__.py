"""`habitat …` — a thin CLI over the same services the MCP tools call.

Each module in `_COMMAND_MODULES` has `register(subparsers)`; a subcommand sets
`handler=fn(args) -> int` (the exit code). Usage errors exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .. import __version__

__all__ = ["main"]

_COMMAND_MODULES = (
    "agent_habitat.cli.shell_cmds",
    "agent_habitat.cli.events_cmd",
    "agent_habitat.cli.demo_cmd",
    "agent_habitat.cli.mcp_cmds",
    "agent_habitat.cli.verify_cmds",
    "agent_habitat.cli.host_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
