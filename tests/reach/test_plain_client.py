"""The standard-library client's one HTTP reader: whole answers and streamed JSON lines,
chunked, of a stated length or up to the close, against a real unix socket."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_habitat.reach.plain_client import HostGone, HostRefused, PlainHost

BOUND = 30.0  # a hang guard for the server thread, not a speed bound

Answer = Callable[[socket.socket], None]
Serve = Callable[[Answer], tuple[PlainHost, list[bytes]]]


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(1 << 16)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(1 << 16)
    return data


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """`serve(answer)`: a one-connection server whose `answer(conn)` writes the reply; the
    requests it received are in the returned list."""
    threads: list[threading.Thread] = []
    listeners: list[socket.socket] = []

    def start(answer: Answer) -> tuple[PlainHost, list[bytes]]:
        path = str(tmp_path / "s")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(1)
        listener.settimeout(BOUND)
        listeners.append(listener)
        requests: list[bytes] = []

        def run() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(BOUND)
                requests.append(_read_request(conn))
                answer(conn)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        return PlainHost(0, path), requests

    yield start
    for thread in threads:
        thread.join(BOUND)
        assert not thread.is_alive()
    for listener in listeners:
        listener.close()


def _chunked(*pieces: bytes) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body + b"0\r\n\r\n"


def test_ask_sends_one_json_request_and_reads_a_stated_length(serve: Serve) -> None:
    body = json.dumps({"ok": True, "n": 3}).encode()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    host, requests = serve(lambda conn: conn.sendall(answer))
    got = host.ask("POST", "/api/shell_run", {"tab": "a"}, timeout=BOUND)
    assert (got.status, got.data) == (200, {"ok": True, "n": 3})
    head, _, sent = requests[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /api/shell_run HTTP/1.1\r\n")
    assert b"Connection: close" in head
    assert json.loads(sent) == {"tab": "a"}


def test_ask_joins_a_chunked_answer(serve: Serve) -> None:
    host, _ = serve(lambda conn: conn.sendall(_chunked(b'{"a": ', b"[1, 2]", b"}")))
    got = host.ask("GET", "/api/status", timeout=BOUND)
    assert (got.status, got.data) == (200, {"a": [1, 2]})


def test_ask_reads_up_to_the_close_without_a_length(serve: Serve) -> None:
    host, _ = serve(lambda conn: conn.sendall(b'HTTP/1.1 200 OK\r\n\r\n{"late": 1}'))
    assert host.ask("GET", "/api/status", timeout=BOUND).data == {"late": 1}


def test_a_refusal_that_is_not_json_becomes_its_error_text(serve: Serve) -> None:
    answer = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 9\r\n\r\nno host\r\n"
    host, _ = serve(lambda conn: conn.sendall(answer))
    got = host.ask("POST", "/api/verify_run", {}, timeout=BOUND)
    assert (got.status, got.data) == (502, None)
    assert got.refusal() == {"error": "no host", "field": None}


def test_lines_yields_each_line_as_it_comes(serve: Serve) -> None:
    first_seen = threading.Event()

    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.sendall(b'%x\r\n{"progress": 1}\n{"pro\r\n' % len(b'{"progress": 1}\n{"pro'))
        assert first_seen.wait(BOUND)  # the rest only after the client has the first line
        rest = b'gress": 2}\n\n{"epoch": {"state": "green"}}'  # the last line has no newline
        conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(rest), rest))

    host, _ = serve(answer)
    seen = []
    for message in host.lines("POST", "/api/verify/wait", {"task": "t1"}):
        seen.append(message)
        first_seen.set()
    assert seen == [{"progress": 1}, {"progress": 2}, {"epoch": {"state": "green"}}]


def test_lines_raises_the_refusal_with_its_error_body(serve: Serve) -> None:
    body = b'{"error": "no task t9", "field": "task"}'
    answer = b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    host, _ = serve(lambda conn: conn.sendall(answer))
    with pytest.raises(HostRefused) as refused:
        list(host.lines("POST", "/api/verify/wait", {"task": "t9"}))
    assert refused.value.status == 404
    assert refused.value.answer == {"error": "no task t9", "field": "task"}


def test_a_line_that_is_not_json_is_a_host_gone(serve: Serve) -> None:
    host, _ = serve(lambda conn: conn.sendall(_chunked(b"{not json}\n")))
    with pytest.raises(HostGone) as gone:
        list(host.lines("POST", "/api/verify/wait", {}))
    assert gone.value.sent


def test_a_host_that_hangs_up_before_answering_is_gone_after_the_send(serve: Serve) -> None:
    host, _ = serve(lambda conn: None)
    with pytest.raises(HostGone) as gone:
        host.ask("POST", "/api/shell_run", {}, timeout=BOUND)
    assert gone.value.sent


def test_no_socket_is_gone_before_the_send(tmp_path: Path) -> None:
    with pytest.raises(HostGone) as gone:
        PlainHost(0, str(tmp_path / "none")).ask("GET", "/api/status", timeout=BOUND)
    assert not gone.value.sent


def test_a_sent_request_is_waited_on_with_a_bound_then_read(serve: Serve) -> None:
    go = threading.Event()

    def answer(conn: socket.socket) -> None:
        assert go.wait(BOUND)
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{"a": 1}')

    host, _ = serve(answer)
    pending = host.send("POST", "/api/shell_run", {"command": "sleep 1"})
    assert not pending.wait(0.01)  # no answer yet: the caller copies output meanwhile
    go.set()
    assert pending.wait(BOUND)
    got = pending.answer()
    assert (got.status, got.data) == (200, {"a": 1})


def test_the_lock_the_light_path_reads_is_the_hosts() -> None:
    from agent_habitat.reach import plain_client
    from agent_habitat.reach.files import HostFiles
    from agent_habitat.workspace import Workspace

    files = HostFiles(Workspace.for_project(Path("/tmp")))
    assert files.lock.name == plain_client.LOCK_NAME


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, -2.5e3, null, true, false, "\\u00e9\\n"], "b": {}}',
        "  [] \n",
        '"x"',
        "NaN",
        '{"big": 123456789012345678901234567890}',
    ],
)
def test_quick_json_reads_as_json_does(text: str) -> None:
    from agent_habitat.reach.quick_json import dumps, loads

    got, want = loads(text), json.loads(text)
    assert repr(got) == repr(want)
    assert json.loads(dumps(want)) == want or repr(json.loads(dumps(want))) == repr(want)


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} x', "[1,]", "nul"])
def test_quick_json_refuses_what_json_refuses(text: str) -> None:
    from agent_habitat.reach.quick_json import loads

    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(ValueError, match=r"JSON value|Expecting|extra data|Unterminated"):
        loads(text)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": [1, 2.5, None, True, False, 'é\n"x\\', {"b": {}}, []], "c": {"d": [[]]}},
        "\u2028\x00\x7f",
        [float("nan"), float("inf"), -float("inf"), -0.0, 1e100, 10**30],
        {1: 2, 2.5: 3, None: 4, False: 5},
        (1, (2,)),
    ],
)
def test_quick_json_indents_as_json_does(value: object) -> None:
    from agent_habitat.reach.quick_json import dumps_indented

    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_quick_json_refuses_to_indent_what_json_cannot_hold() -> None:
    from agent_habitat.reach.quick_json import dumps_indented

    with pytest.raises(TypeError, match="set"):
        dumps_indented({"a": {1}})
    with pytest.raises(TypeError, match="keys"):
        dumps_indented({(1,): 1})
