# host/: the workspace host — one long-lived process per workspace, and the ways to reach it.
#   server     the host process: lock, unix socket (+ TCP), uvicorn, signals, idle exit
#   app        the HTTP app (/mcp, /events, /api/status) and `build_mcp`, what it serves
#   guard      Host/Origin checks on every request, the bearer token on TCP
#   events_stream  /events: the journal as resumable server-sent events
#   lock       host.lock: one host per workspace, its record (pid, endpoints)
#   files      the host's files in the state folder and their permission checks
#   launcher   find / start (detached) / stop a workspace's host from another process
#   bridge     stdio ↔ host relay that restarts a dead host;  stdio  it on real stdin/stdout
#   mcp_stream /mcp as one long exchange of JSON lines (the bridge's);  link  its client end
#   config     [tool.habitat.host];  __main__  `python -m agent_habitat.host`
# Names load from their module on first use (PEP 562): the CLI asks `find_host` on every
# shell command and must not pay for the bridge, uvicorn or the MCP SDK to do so.
from ..lazy import lazy_attributes

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported

_HOME = {
    "Bridge": "bridge",
    "HostHandle": "launcher",
    "HostRecord": "lock",
    "ensure_host": "launcher",
    "find_host": "launcher",
    "serve_bridge": "stdio",
    "stop_host": "launcher",
}

if TYPE_CHECKING:
    from .bridge import Bridge
    from .launcher import HostHandle, ensure_host, find_host, stop_host
    from .lock import HostRecord
    from .stdio import serve_bridge


__getattr__ = lazy_attributes(__name__, _HOME)


__all__ = [
    "Bridge",
    "HostHandle",
    "HostRecord",
    "ensure_host",
    "find_host",
    "serve_bridge",
    "stop_host",
]
