"""`habitat init`: register the habitat's two MCP servers in a client's project config.

Claude Code reads `.mcp.json` (`mcpServers`), Cursor `.cursor/mcp.json` (`mcpServers`),
VS Code `.vscode/mcp.json` (`servers`). The file is merged, never clobbered: other
servers and keys stay as they are, an existing `habitat` entry is updated (and the result
says so), and a file that is not valid JSON is refused untouched.

Teams commit these files, so by default an entry holds nothing of this machine: the command
is `habitat` as found on PATH, and the project is the folder the client starts the server
in (Claude Code: its cwd, found by `habitat mcp` itself) or the client's own variable for
it (Cursor and VS Code: `${workspaceFolder}`). `pinned=True` (`habitat init --absolute`)
writes this habitat's absolute path and the project's instead, for one machine.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Literal, NamedTuple

from .errors import HabitatError
from .files.atomic import write_project_file

__all__ = [
    "CONFIG_FILES",
    "PORTABLE_COMMAND",
    "PRIMARY_SERVER",
    "TERMINAL_SERVER",
    "ClientKind",
    "ConfigFileError",
    "InitResult",
    "ServerChange",
    "describe",
    "habitat_command",
    "install_servers",
]

ClientKind = Literal["claude", "cursor", "vscode"]

CONFIG_FILES: dict[ClientKind, str] = {
    "claude": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
}
_SERVERS_KEY: dict[ClientKind, str] = {
    "claude": "mcpServers",
    "cursor": "mcpServers",
    "vscode": "servers",
}
PRIMARY_SERVER = "habitat"
TERMINAL_SERVER = "habitat-terminal"
# Keys naming another transport, dropped when an entry becomes our stdio server.
_TRANSPORT_KEYS = ("type", "url", "headers", "command", "args")
# The console scripts of the distribution (pyproject `[project.scripts]`).
_SCRIPT_NAMES = ("habitat", "agent-habitat")
PORTABLE_COMMAND = "habitat"
"""What a committed config runs: the console script, looked up on each machine's PATH."""
# The project as the client names it when it starts a server; None: the client starts the
# server in the project (Claude Code), and `habitat mcp` finds the work tree around its cwd.
_PROJECT_VARIABLE: dict[ClientKind, str | None] = {
    "claude": None,
    "cursor": "${workspaceFolder}",
    "vscode": "${workspaceFolder}",
}


# Named tuples, not pydantic models: `habitat init` is a command a person types, and
# pydantic's import and first model were most of its time (issue 25).
class ServerChange(NamedTuple):
    name: str
    """Server entry name in the client's config."""
    action: Literal["added", "updated", "unchanged"]
    """added: new entry; updated: an existing entry now runs this habitat; unchanged: it
    already did."""


class InitResult(NamedTuple):
    client: ClientKind
    path: str
    """The config file, relative to the project root."""
    created: bool
    """True when the file did not exist before."""
    servers: list[ServerChange]
    """What happened to each habitat entry."""
    kept: list[str]
    """Other servers already in the file, left as they were."""
    pinned: bool
    """True (`--absolute`): the entries hold this machine's absolute paths."""
    on_path: bool
    """Whether `habitat` is found on this PATH (what an unpinned entry runs)."""

    def to_json(self) -> str:
        """The result as `habitat init --json` prints it (its fields in order)."""
        fields = self._asdict() | {"servers": [c._asdict() for c in self.servers]}
        return json.dumps(fields, indent=2, ensure_ascii=False)


class ConfigFileError(HabitatError):
    """The existing config cannot be merged safely; it was left untouched."""


def habitat_command() -> list[str]:
    """The absolute command that starts this same `habitat` (argv before the subcommand)."""
    launched = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if launched is not None and launched.name in _SCRIPT_NAMES and launched.exists():
        # Not resolved: a pipx/uv link in ~/.local/bin outlives upgrades of its target.
        return [os.path.abspath(launched)]
    sibling = Path(sys.executable).with_name("habitat")
    if sibling.exists():
        return [str(sibling)]
    return [sys.executable, "-m", "agent_habitat"]


def _entries(
    client: ClientKind, command: list[str], project: Path | None
) -> dict[str, dict[str, Any]]:
    def entry(*args: str) -> dict[str, Any]:
        body: dict[str, Any] = {} if client == "cursor" else {"type": "stdio"}
        body.update(command=command[0], args=[*command[1:], *args])
        return body

    named = str(project) if project is not None else _PROJECT_VARIABLE[client]
    return {
        PRIMARY_SERVER: entry("mcp", *(("--project", named) if named is not None else ())),
        TERMINAL_SERVER: entry("terminal-mcp"),
    }


def install_servers(
    project: Path, client: ClientKind, command: list[str] | None = None
) -> InitResult:
    """Merge the `habitat` and `habitat-terminal` entries into the client's project config.

    `command` None: the portable entries (`habitat` on PATH, the project as the client
    knows it); a command: pinned entries running it, on this project's absolute path."""
    label = CONFIG_FILES[client]
    path = project / label
    key = _SERVERS_KEY[client]
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raw = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"cannot read {label}: {exc}; nothing was changed") from exc
    config = _parse(raw, label) if raw is not None else {}
    servers = config.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ConfigFileError(
            f"{label}: `{key}` is a {type(servers).__name__}, not an object of servers; "
            "fix it by hand; nothing was changed"
        )
    kept = [name for name in servers if name not in (PRIMARY_SERVER, TERMINAL_SERVER)]
    changes: list[ServerChange] = []
    pinned = command is not None
    entries = _entries(client, command or [PORTABLE_COMMAND], project.resolve() if pinned else None)
    for name, ours in entries.items():
        existing = servers.get(name)
        if not isinstance(existing, dict):
            changes.append(
                ServerChange(name=name, action="added" if existing is None else "updated")
            )
            servers[name] = ours
            continue
        # The user's own keys (env, disabled, …) stay; the transport becomes ours.
        merged = {k: v for k, v in existing.items() if k not in _TRANSPORT_KEYS} | ours
        action: Literal["updated", "unchanged"] = "unchanged" if merged == existing else "updated"
        servers[name] = merged
        changes.append(ServerChange(name=name, action=action))
    if raw is None or any(change.action != "unchanged" for change in changes):
        data = (json.dumps(config, indent=2) + "\n").encode("utf-8")
        write_project_file(path, data, existed=raw is not None)
    return InitResult(
        client=client,
        path=label,
        created=raw is None,
        servers=changes,
        kept=kept,
        pinned=pinned,
        on_path=_on_path(PORTABLE_COMMAND),
    )


def _on_path(command: str) -> bool:
    import shutil  # here: with zlib, bz2 and lzma, a tenth of `habitat init`'s imports

    return shutil.which(command) is not None


def _parse(raw: str, label: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(
            f"{label} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it, or add the servers by hand (comments are not supported); nothing was changed"
        ) from exc
    if not isinstance(config, dict):
        raise ConfigFileError(
            f"{label} holds a JSON {type(config).__name__}, not an object; nothing was changed"
        )
    return config


def describe(result: InitResult) -> str:
    """What `habitat init` did, in words."""
    said = {
        "added": "added",
        "updated": "updated (it existed; now runs habitat as written here)",
        "unchanged": "already up to date",
    }
    if not result.created and all(c.action == "unchanged" for c in result.servers):
        lines = [f"{result.path}: already registers habitat and habitat-terminal; not written"]
    else:
        changes = ", ".join(f"{c.name} {said[c.action]}" for c in result.servers)
        lines = [f"{'created' if result.created else 'updated'} {result.path}: {changes}"]
    if result.kept:
        lines.append(f"kept the other servers: {', '.join(result.kept)}")
    if result.pinned:
        lines.append(
            f"pinned to this machine's paths (--absolute): keep {result.path} out of the "
            "repository, or run `habitat init` without --absolute for a file to commit"
        )
    elif not result.on_path:
        lines.append(
            f"warning: `{PORTABLE_COMMAND}` is not on this PATH, so the client will not find "
            "it: install agent-habitat where your PATH reaches (`pipx install` with the path of "
            "its checkout or of a wheel built from one: it is on no public index yet), or pin "
            "this one with `habitat init --absolute`"
        )
    return "\n".join(lines) + "\n"
