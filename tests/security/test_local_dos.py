"""A local user without a token cannot make the host unreachable by holding TCP requests
half-sent (issue 23: about 1,100 of them shut out the unix socket too).

A real host on loopback TCP; the attacker is this test, with real sockets.
"""

from __future__ import annotations

import resource
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest

from agent_habitat.host.tcp_limits import HEAD_TIMEOUT_SECONDS
from agent_habitat.reach import HostHandle, ensure_host, stop_host
from agent_habitat.reach.launcher import host_files

pytestmark = [pytest.mark.timeout(180), pytest.mark.finding("local-dos")]

ATTACKERS = 1100
# A bound on each answer, not a speed claim.
BOUND_S = 30.0


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostHandle]:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    handle = ensure_host(root, tcp="127.0.0.1:0")
    yield handle
    stop_host(root)


@pytest.fixture
def many_fds() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = ATTACKERS * 2 + 256
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"this process may open {hard} files; the attack needs {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _half_sent(address: tuple[str, int]) -> socket.socket | None:
    sock = socket.socket()
    sock.settimeout(BOUND_S)
    try:
        sock.connect(address)
        host = f"{address[0]}:{address[1]}"
        sock.sendall(f"GET /api/status HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode())
    except OSError:
        sock.close()
        return None  # refused or reset: the host is defending itself, as it should
    return sock


def _status_over_socket(handle: HostHandle) -> int:
    transport = httpx2.HTTPTransport(uds=handle.record.socket)
    with httpx2.Client(transport=transport, base_url="http://localhost", timeout=BOUND_S) as c:
        return c.get("/api/status").status_code


def _status_over_tcp(handle: HostHandle, root: Path) -> int:
    assert handle.record.tcp is not None
    token = host_files(root).token()
    with httpx2.Client(base_url=handle.record.tcp, timeout=BOUND_S) as c:
        return c.get("/api/status", headers={"Authorization": f"Bearer {token}"}).status_code


def test_half_sent_tcp_requests_leave_the_socket_and_a_real_tcp_client_answered(
    host: HostHandle, many_fds: None
) -> None:
    assert host.record.tcp is not None
    parts = urlsplit(host.record.tcp)
    address = (parts.hostname or "127.0.0.1", parts.port or 0)
    root = Path(host.record.root or "")
    held: list[socket.socket] = []
    try:
        for _ in range(ATTACKERS):
            sock = _half_sent(address)
            if sock is not None:
                held.append(sock)
        assert _status_over_socket(host) == 200
        assert _status_over_tcp(host, root) == 200
    finally:
        for sock in held:
            sock.close()


def test_a_request_head_that_never_ends_is_closed_by_the_host(host: HostHandle) -> None:
    assert host.record.tcp is not None
    parts = urlsplit(host.record.tcp)
    sock = _half_sent((parts.hostname or "127.0.0.1", parts.port or 0))
    assert sock is not None
    with sock:
        sock.settimeout(HEAD_TIMEOUT_SECONDS + BOUND_S)
        # The host closes it: EOF (or a reset), never an endless wait.
        try:
            said = sock.recv(1024)
        except ConnectionResetError:
            said = b""
    assert said == b""
