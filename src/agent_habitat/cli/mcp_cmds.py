"""`habitat mcp [--embedded] [--project DIR]` and `habitat terminal-mcp`: MCP over stdio.

stdout carries the protocol, so everything said to a person goes to stderr.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HabitatError, UsageError
from ..project_folder import a_project
from ..workspace import Workspace, find_project_root, scm_root

if TYPE_CHECKING:
    from ..mcp_tools import PrimaryServer, TerminalServer

__all__ = ["register"]


def register(subparsers: Any) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="serve the primary MCP server (shell_* tools) over stdio",
        description=(
            "Serve the primary MCP server over stdio, for an MCP client to launch. "
            "Without --embedded it bridges stdio to the workspace host (started if needed), so "
            "tabs, runs and warm state outlive the client; --embedded serves in this process."
        ),
    )
    mcp.add_argument(
        "--embedded", action="store_true", help="run the shell habitat in this process"
    )
    mcp.add_argument(
        "--project",
        type=Path,
        metavar="DIR",
        help="project folder to open (default: the client's roots, else the cwd's git work tree)",
    )
    mcp.set_defaults(handler=run_mcp)
    terminal = subparsers.add_parser(
        "terminal-mcp",
        help="serve the escape MCP server (terminal_* tools) over stdio",
        description=(
            "Serve the escape terminal over stdio: the shell verbs as terminal_*, on their own "
            "state, independent of any other habitat process."
        ),
    )
    terminal.set_defaults(handler=run_terminal_mcp)


def _quiet_logging() -> None:
    import logging

    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format="habitat %(levelname)s %(name)s: %(message)s",
    )


@asynccontextmanager
async def open_primary(project: Path | None, root: Path) -> AsyncIterator[PrimaryServer]:
    """The workspace (where state lives) is that of `root`; the open project can change
    later (client roots, `project_open`), the state folder does not."""
    from agent_habitat.habitat import Habitat  # here: the bridge serves no habitat itself
    from agent_habitat.mcp_tools import primary_server

    async with (
        Habitat.open(Workspace.for_project(root), project=project) as habitat,
        primary_server(habitat) as primary,
    ):
        yield primary


@asynccontextmanager
async def open_terminal() -> AsyncIterator[TerminalServer]:
    """The escape terminal's own state namespace, independent of every workspace."""
    from agent_habitat.habitat import Habitat
    from agent_habitat.mcp_tools import terminal_server

    async with (
        Habitat.open(Workspace.named("terminal")) as habitat,
        terminal_server(habitat) as terminal,
    ):
        yield terminal


def _not_a_folder(project: str) -> str:
    """Why `--project` is refused; a client variable left as it was says so."""
    variable = re.search(r"\$\{[^}]*\}", project)
    if variable is None:
        return f"--project {project} is not a directory"
    return (
        f"--project {project}: the MCP client did not replace {variable[0]}; give the "
        "project's path, or leave --project out where the client starts the server in the "
        "project (Claude Code: habitat init --client claude writes that line)"
    )


def run_mcp(args: argparse.Namespace) -> int:
    """Serve the primary server until the client closes stdin (or SIGTERM)."""
    project: Path | None = args.project
    if project is not None and not project.is_dir():
        print(f"habitat mcp: {_not_a_folder(str(project))}", file=sys.stderr)
        return 2
    # `--project`, else the git work tree around the cwd, else the cwd.
    try:
        root = a_project(project, named="--project") if project is not None else find_project_root()
    except UsageError as exc:
        print(f"habitat mcp: {exc}", file=sys.stderr)
        return 2
    if not args.embedded:
        # Threads and plain sockets: no asyncio, no logging (half of its start, issue 25).
        from agent_habitat.reach import serve_bridge

        serve_bridge(root)  # leaves the process
        return 0
    # Before the SDK is imported (a second of CPU): `initialize` is answered meanwhile.
    # Imported here: the bridge above has no use for it (threads, dataclasses, logging).
    from ..mcp_tools.handshake import PRIMARY, Handshake

    handshake = Handshake(PRIMARY).start()
    if (refused := _bad_configuration(root, flagged=project is not None)) is not None:
        print(f"habitat mcp: {refused}", file=sys.stderr)
        return 2
    _quiet_logging()
    from agent_habitat.mcp_tools import serve_stdio

    return _run(lambda: serve_stdio("habitat mcp", lambda: open_primary(project, root), handshake))


def _bad_configuration(root: Path, *, flagged: bool) -> HabitatError | None:
    """What the habitat's open (`Habitat.open`) would refuse in the configuration, checked
    as it checks it, before the SDK's import: a bad `HABITAT_*` value is said in a moment,
    not seconds later. The shell's settings come from `root`'s pyproject.toml, the runner's
    from the open project's: `root` when it was named (`flagged`, `--project`), else the git
    work tree around it, else none. Anything else that goes wrong here is left to the open,
    which says it its own way."""
    from ..config import load_shell_config
    from ..verify.runner.config import load_runner_config

    try:
        load_shell_config(root)
        load_runner_config(root if flagged else scm_root(root.resolve()))
    except HabitatError as exc:
        return exc
    except Exception:  # boundary: the open meets it again and reports it its own way
        return None
    return None


def run_terminal_mcp(args: argparse.Namespace) -> int:
    """Serve the escape terminal until the client closes stdin (or SIGTERM)."""
    from ..mcp_tools.handshake import TERMINAL, Handshake

    handshake = Handshake(TERMINAL).start()
    _quiet_logging()
    from agent_habitat.mcp_tools import serve_stdio

    return _run(lambda: serve_stdio("habitat terminal-mcp", open_terminal, handshake))


def _run(serve: Callable[[], Awaitable[None]]) -> int:
    import anyio

    # Errors, signals and their exit statuses are handled inside `serve_stdio`.
    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        return 130
    return 0
