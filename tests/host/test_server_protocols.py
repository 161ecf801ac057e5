"""Which HTTP parser each of the host's listeners runs.

Issue 23 ("Under load"): h11, in pure Python, was a quarter of the host's CPU per call with
8 loud tabs and 20 callers. The unix socket (its owner's CLI, bridge and benchmarks) parses
with httptools, a dependency; TCP keeps h11, which its connection cap and head timeout
extend (`host/tcp_limits.py`). Neither takes `X-Forwarded-*` from a client: no proxy fronts
the host.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from agent_habitat.host import server
from agent_habitat.host.tcp_limits import TcpLimitedProtocol


async def _app(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("not called")


@pytest.mark.finding("under-load")
def test_the_unix_socket_parses_with_httptools_and_tcp_keeps_its_limits() -> None:
    unix = server._config(SimpleNamespace(asgi=_app), None)  # type: ignore[arg-type]
    tcp = server._config(SimpleNamespace(asgi=_app), 16)  # type: ignore[arg-type]
    for config in (unix, tcp):
        config.load()
        assert config.proxy_headers is False
    assert unix.http_protocol_class.__name__ == "HttpToolsProtocol"
    assert issubclass(tcp.http_protocol_class, TcpLimitedProtocol)
