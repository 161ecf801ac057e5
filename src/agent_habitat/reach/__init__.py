# reach/: the way to reach a workspace host from another process — the client side of host/.
#   files     the host's files in the state folder (socket, lock, log, token) and their checks
#   lock      host.lock: one host per workspace, its record (pid, endpoints)
#   launcher  find / start (detached) / stop a workspace's host
#   client    a verb call over the host's JSON API (httpx, the verb's models)
#   plain_client  one JSON call over the host's socket with the standard library alone
#   quick_json  JSON for that light path from `_json`, without importing `json` (nor `re`)
#   link      the client end of /mcp as one long exchange of JSON lines
#   bridge    stdio ↔ host relay that restarts a dead host;  stdio  it on real stdin/stdout
#   handoff   stdin and stdout handed to the host, which serves them (the books kept meanwhile)
#   direct    the bridge while a host serves them: a host gone, the next; else the relay
# It never imports host/'s server side, the MCP SDK, Starlette or `Habitat` (as mypy's
# dmypy/client.py never imports dmypy_server); tests/core/test_layering.py checks it.
# Names load from their module on first use (PEP 562): the CLI asks `find_host` on every
# shell command and must not pay for the bridge or httpx to do so.
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
