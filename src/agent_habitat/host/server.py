"""The host process: one per workspace, serving the app on the unix socket (and TCP).

Lifecycle: take `host.lock` (or leave: another host runs), open the habitat, listen,
publish the record into the lock file, journal `host.started`; serve until SIGTERM /
SIGINT / SIGHUP or until idle (no client and no running run for `idle_seconds`); then
stop listening, close the habitat (runs go on in their own sessions), stop the warm
daemons (dmypy) and free the lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from anyio import TASK_STATUS_IGNORED
from anyio.abc import TaskStatus

from agent_habitat.errors import HabitatError
from agent_habitat.reach.files import HostFiles
from agent_habitat.reach.lock import HostLock, HostRecord
from agent_habitat.workspace import Workspace

from .app import HostApp, Hosted, build_app, build_mcp
from .config import load_host_config
from .stdio_handoff import serve_handoffs, stdio_listener
from .tcp_address import parse_tcp

__all__ = ["AlreadyRunning", "parse_tcp", "serve_host"]

logger = logging.getLogger(__name__)

# Open SSE streams (MCP GET streams, /events) never end by themselves; on shutdown they
# get this long before uvicorn cancels them.
GRACEFUL_SHUTDOWN_SECONDS = 1
# `dmypy stop`, then killing what is left, at most this long on the way out.
WARM_STOP_SECONDS = 20


class AlreadyRunning(Exception):
    """Another live host holds this workspace's lock."""


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config)
        self.sockets = sockets
        self.listening = anyio.Event()

    # The host handles signals itself (and uvicorn's capture re-raises them on exit).
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


def _config(app: HostApp, tcp_cap: int | None) -> uvicorn.Config:
    """The unix socket's server (`tcp_cap` None: its owner alone can connect), or TCP's.

    The unix socket parses HTTP with httptools (uvicorn's "auto", a dependency): h11 in pure
    Python cost a quarter of the host's CPU per call. TCP keeps h11, which its limits extend.
    No proxy fronts the host, so no `X-Forwarded-*` header is taken from a client."""
    limits: dict[str, Any] = {}
    if tcp_cap is not None:
        # Here: uvicorn's h11 protocol, which these limits extend, only for a TCP listener.
        from .tcp_limits import HEAD_TIMEOUT_SECONDS, MAX_HEAD_BYTES, TcpLimitedProtocol

        limits = {
            "http": TcpLimitedProtocol.configured(tcp_cap, HEAD_TIMEOUT_SECONDS),
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
            "backlog": 128,
        }
    return uvicorn.Config(
        app.asgi,
        lifespan="off",
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        **limits,
    )


def _tcp_cap() -> int:
    """How many TCP connections the listener keeps (the fd limit raised first)."""
    from .tcp_limits import raise_fd_limit, tcp_connection_cap

    return tcp_connection_cap(raise_fd_limit())


def _unix_listener(path: Path) -> socket.socket:
    # Only the lock holder gets here, so a socket file left at `path` is a dead host's.
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: no window in which others could connect
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def _tcp_listener(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


async def serve_host(
    root: Path, *, tcp: tuple[str, int] | None = None, lock: HostLock | None = None
) -> None:
    """Run the workspace host for project `root` until stopped or idle; `lock`: the
    workspace's lock, taken already (`python -m agent_habitat.host` takes it first thing)."""
    files = HostFiles(Workspace.for_project(root))
    files.prepare()
    if lock is None:
        lock = HostLock(files.lock)
        if not lock.acquire():
            raise AlreadyRunning(f"a host already runs for {root} (see {files.lock})")
    try:
        config = load_host_config(root)
        # Always: a host started without TCP can open a loopback listener on demand
        # (`habitat dashboard`), and that listener needs the token from its first request.
        token = files.token()
        try:
            async with build_mcp(root, freeze_heap=True) as hosted:
                await _serve(hosted, files, lock, root, tcp, token, config.idle_seconds)
        finally:
            await _stop_warm_daemons(root, files.workspace)
    finally:
        for path in (files.socket, files.stdio_socket):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        lock.release()


async def _stop_warm_daemons(root: Path, workspace: Workspace) -> None:
    # The daemons are the host's: they stop with it (the next host warms them again).
    from agent_habitat.verify import stop_type_daemon  # at the stop: not on the way to listening

    with anyio.move_on_after(WARM_STOP_SECONDS, shield=True):
        try:
            await stop_type_daemon(root, workspace)
        except (HabitatError, OSError):
            logger.exception("could not stop the warm dmypy daemon")


async def _serve(
    hosted: Hosted,
    files: HostFiles,
    lock: HostLock,
    root: Path,
    tcp: tuple[str, int] | None,
    token: str | None,
    idle_seconds: float,
) -> None:
    extra = (tcp[0],) if tcp else ()
    app = build_app(hosted, token=token, extra_hosts=extra, idle_seconds=idle_seconds, files=files)
    # Two servers, each with its own connections: a TCP listener saturated by clients
    # without a token never shuts the socket's owner out (host/tcp_limits.py).
    servers = [_Uvicorn(_config(app, None), [_unix_listener(files.socket)])]
    # Where a bridge hands over its client's stdio (none where no peer's uid can be checked).
    stdio = stdio_listener(files.stdio_socket)
    tcp_url = None
    if tcp:
        listener = _tcp_listener(*tcp)
        bound = listener.getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        tcp_url = f"http://{shown}:{bound[1]}"
        servers.append(_Uvicorn(_config(app, _tcp_cap()), [listener]))
    reason = "stopped"
    async with hosted.mcp.serving(), anyio.create_task_group() as tg:

        def stop(why: str) -> None:
            nonlocal reason
            reason = why
            for server in servers:
                server.should_exit = True

        running = len(servers)

        async def serve(server: _Uvicorn) -> None:
            nonlocal running
            await server.serve(sockets=server.sockets)
            stop(reason)  # one listener ends: the host ends
            running -= 1
            if not running:
                tg.cancel_scope.cancel()

        # SIGTERM is ours before the record says a host serves: a stop sent the moment the
        # record appears would otherwise kill the host by the signal's default action, with
        # its socket left behind and its warm daemons still running.
        await tg.start(_stop_on_signal, stop)
        for server in servers:
            tg.start_soon(serve, server)
        if stdio is not None:
            tg.start_soon(serve_handoffs, stdio, hosted, app, root)
        with anyio.fail_after(30):
            for server in servers:
                await server.listening.wait()
        record = HostRecord(
            pid=os.getpid(),
            started_at=time.time(),
            socket=str(files.socket),
            tcp=tcp_url,
            root=str(root),
        )
        app.info.update({"socket": record.socket, "tcp": record.tcp, "root": record.root})
        lock.publish(record)
        opening = anyio.Lock()

        async def open_tcp(where: tuple[str, int]) -> str:
            """The TCP listener, opened now on loopback `where` if the host has none: the
            warm state stays (a restart with --tcp would throw it away)."""
            nonlocal record, running
            async with opening:
                if record.tcp is not None:
                    return record.tcp
                listener = _tcp_listener(*where)
                bound = listener.getsockname()
                shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
                server = _Uvicorn(_config(app, _tcp_cap()), [listener])
                servers.append(server)
                running += 1
                tg.start_soon(serve, server)
                with anyio.fail_after(30):
                    await server.listening.wait()
                record = record.model_copy(update={"tcp": f"http://{shown}:{bound[1]}"})
                app.info["tcp"] = record.tcp
                lock.publish(record)
                assert record.tcp is not None
                return record.tcp

        app.open_tcp = open_tcp
        hosted.bus.publish("host.started", data={"pid": record.pid, "tcp": tcp_url})
        tg.start_soon(_prepare_when_quiet, app, hosted, root)
        if idle_seconds > 0:
            tg.start_soon(_stop_when_idle, app, hosted, idle_seconds, stop)
    hosted.bus.publish("host.stopped", data={"pid": os.getpid(), "reason": reason})


PREPARE_MCP_QUIET_SECONDS = 1.0
"""How long the host waits, after its start, for a moment with no request before it builds
its MCP side (`McpSide.prepare`): the commands a person types right after it started are
not slowed by the SDK's import, and an agent's first `tools/list` is not either."""


async def _quiet(app: HostApp) -> None:
    while True:
        # Polled, as the idle exit is: a request's end is not an event anyone publishes.
        quiet = app.activity.quiet_for()
        if quiet >= PREPARE_MCP_QUIET_SECONDS:
            return
        await anyio.sleep(max(PREPARE_MCP_QUIET_SECONDS - quiet, PREPARE_MCP_QUIET_SECONDS / 4))


async def _prepare_mcp_when_quiet(app: HostApp, hosted: Hosted) -> None:
    await _quiet(app)
    try:
        await hosted.mcp.prepare()
    except Exception:
        # Best effort: the first request for /mcp builds it again and answers what failed.
        logger.exception("building the MCP side ahead of its first request failed")


async def _prepare_when_quiet(app: HostApp, hosted: Hosted, root: Path) -> None:
    """The MCP side, then the climb's modules (verify/climb_imports.py), each in a quiet
    moment: a first verify then starts its tools without importing the ladder on the event
    loop (0.75 s of a Rust first verify at load 11)."""
    await _prepare_mcp_when_quiet(app, hosted)
    if hosted.habitat.verify is None:
        return
    await _quiet(app)
    from agent_habitat.verify import import_climb

    try:
        # Abandoned on cancel: a host told to stop does not wait for an import to finish.
        await anyio.to_thread.run_sync(import_climb, root, abandon_on_cancel=True)
    except Exception:
        # Best effort: the first verify imports what is missing, and fails as it would have.
        logger.exception("importing the climb ahead of the first verify failed")


async def _stop_on_signal(
    stop: Callable[[str], None], *, task_status: TaskStatus[None] = TASK_STATUS_IGNORED
) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        task_status.started()
        async for signum in signals:
            stop(f"signal {signal.Signals(signum).name}")
            return


async def _stop_when_idle(
    app: HostApp, hosted: Hosted, idle_seconds: float, stop: Callable[[str], None]
) -> None:
    tick = min(max(idle_seconds / 10, 0.05), 5.0)
    while True:
        await anyio.sleep(tick)
        if app.activity.open:
            continue
        scene = await hosted.shell.scene()
        if any(t.state == "running" for t in scene.tabs):
            app.activity.touch()  # the idle time counts from the run's end
            continue
        if app.activity.quiet_for() >= idle_seconds:
            logger.warning("no client and no running run for %ss: exiting", idle_seconds)
            stop("idle")
            return
