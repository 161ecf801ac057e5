"""`--tcp HOST:PORT`, read and refused before anything starts, with the standard library
alone: `habitat host start` checks the flag without importing the server (the MCP SDK,
uvicorn: a second of CPU that would compete with the host it starts)."""

from __future__ import annotations

import ipaddress

from agent_habitat.errors import UsageError

__all__ = ["parse_tcp"]


def parse_tcp(value: str, *, allow_remote: bool, has_token: bool = True) -> tuple[str, int]:
    """`HOST:PORT` (or `[v6]:PORT`); a non-loopback host only with `--allow-remote`."""
    host, sep, port_text = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise UsageError(f"--tcp {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    loopback = host == "localhost"
    if not loopback:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError as exc:
            raise UsageError(f"--tcp {value!r}: {host!r} is not an IP address") from exc
    if not loopback and not (allow_remote and has_token):
        raise UsageError(
            f"--tcp {value}: refusing to listen beyond loopback; anyone who can reach {host} "
            "could drive your shell. Pass --allow-remote to mean it (the token is still required)"
        )
    return host, int(port_text)
