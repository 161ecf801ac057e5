"""`habitat init --client claude|cursor|vscode` — register the habitat with a client."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..client_config import CONFIG_FILES, ClientKind, describe, habitat_command, install_servers
from ..errors import HabitatError, UsageError
from .common import add_common, emit_json, project_root

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "init",
        help="write a client's MCP config for this project (habitat and habitat-terminal)",
        description=(
            "Register `habitat mcp` and `habitat terminal-mcp` (this habitat, by absolute "
            "path) in the project's MCP config for a client: "
            + ", ".join(f"{k}: {v}" for k, v in CONFIG_FILES.items())
            + ". Merges into an existing file: other servers and keys are kept."
        ),
    )
    p.add_argument("--client", required=True, choices=sorted(CONFIG_FILES), help="the client")
    add_common(p)
    p.set_defaults(handler=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    client: ClientKind = args.client
    try:
        result = install_servers(project_root(args), client, habitat_command())
    except UsageError as exc:
        print(f"habitat: {exc}", file=sys.stderr)
        return 2
    except HabitatError as exc:
        print(f"habitat: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"habitat: cannot write {CONFIG_FILES[client]}: {exc.strerror}", file=sys.stderr)
        return 1
    if args.json:
        emit_json(result)
    else:
        sys.stdout.write(describe(result))
    return 0
