"""`habitat init --client claude|cursor|vscode` — register the habitat with a client."""

from __future__ import annotations

import argparse
from typing import Any

from ..client_config import CONFIG_FILES, ClientKind, describe, habitat_command, install_servers
from .common import FlagError, add_common, emit_project_write, project_root, report_error

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "init",
        help="write a client's MCP config for this project (habitat and habitat-terminal)",
        description=(
            "Register `habitat mcp` and `habitat terminal-mcp` in the project's MCP config "
            "for a client: "
            + ", ".join(f"{k}: {v}" for k, v in CONFIG_FILES.items())
            + ". The file is one to commit: it runs `habitat` from PATH and names the project "
            "as the client does (Cursor, VS Code: ${workspaceFolder}; Claude Code starts the "
            "server in the project). Merges into an existing file: other servers and keys are "
            "kept."
        ),
    )
    # Checked in `cmd_init`, not by argparse, whose "the following arguments are required:
    # --client" names neither the values nor an example (issue 25).
    p.add_argument("--client", choices=sorted(CONFIG_FILES), help="the client (required)")
    p.add_argument(
        "--absolute",
        action="store_true",
        help="pin this machine's paths: this habitat's absolute path and the project's "
        "(a file for this machine only, not one to commit)",
    )
    add_common(p)
    p.set_defaults(handler=cmd_init)


def missing_client() -> FlagError:
    """The usage error of `habitat init` without `--client`: the flag, its values, an example."""
    return FlagError(
        f"--client is required: the client whose MCP config to write, one of "
        f"{', '.join(sorted(CONFIG_FILES))} (e.g. `habitat init --client claude`)",
        "client",
    )


def cmd_init(args: argparse.Namespace) -> int:
    client: ClientKind | None = args.client
    if client is None:
        return report_error(missing_client(), as_json=bool(args.json))
    return emit_project_write(
        args,
        CONFIG_FILES[client],
        lambda: install_servers(
            project_root(args), client, habitat_command() if args.absolute else None
        ),
        describe,
    )
