"""The host's JSON API over its unix socket, with the standard library alone.

A CLI call that a running host answers should cost a process start and a round trip, not
the second of imports that `reach.client` (httpx, the pydantic models) brings. The socket
needs no token (only the user can open it, mode 0600), so one HTTP/1.1 request with
`Connection: close` and a JSON body is the whole protocol. One reader serves both kinds of
answer: `PlainHost.ask` returns the status and the decoded JSON body; `PlainHost.lines`
yields the JSON lines of a streamed answer (`application/x-ndjson`, chunked or not) as they
come. Nothing here knows a verb; the callers (`cli.host_verbs`, `cli.host_scene`,
`cli.verify_hosted`, `cli.host_cmd`) decide what to send and what an answer means.

`live_host` finds the host: the socket its `host.lock` names while a live process holds
that lock (the kernel drops the lock when the host dies, so a stale record reads as none).
"""

from __future__ import annotations

import _socket
import fcntl
import os

from ..errors import HabitatError
from .quick_json import dumps, loads

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

__all__ = [
    "LOCK_NAME",
    "HostAnswer",
    "HostGone",
    "HostRefused",
    "Pending",
    "PlainHost",
    "StateNotSafe",
    "host_of",
    "live_host",
    "starting_host",
]

STARTING_SECONDS = 60.0
"""How long a call waits for a host that holds its lock but has not published its record yet
(starting: a second on a quiet machine, tens of seconds on one loaded 15-fold) before it goes
on without; `reach.launcher`'s bound for a start, which the bridge and verify wait as long."""
CONNECT_SECONDS = 10.0
"""A bound for connecting to a host that holds its lock but does not accept (hung)."""


class HostGone(OSError):
    """The host could not be reached, or went away before it answered."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent
        """True when the request may have reached the host (it may have acted on it)."""


# Plain classes, not dataclasses: `dataclasses` imports `inspect`, a tenth of this path.
class HostAnswer:
    """An answer: its HTTP status, its JSON body decoded (None when the body is empty or
    not JSON) and the body as text (for a message when it is not the JSON expected)."""

    __slots__ = ("data", "status", "text")

    def __init__(self, status: int, data: Any, text: str) -> None:
        self.status = status
        self.data = data
        self.text = text

    def refusal(self) -> Any:
        """The error body of a refusal (`{"error", "field"}`); a body that is not JSON
        becomes the error's text, an empty one None."""
        if self.data is not None or not self.text.strip():
            return self.data
        return {"error": self.text.strip(), "field": None}


class HostRefused(Exception):
    """A streamed call answered with a status other than 200; `answer` is its error body
    (`HostAnswer.refusal`)."""

    def __init__(self, status: int, answer: Any) -> None:
        super().__init__(status)
        self.status = status
        self.answer = answer


class PlainHost:
    """The live host of a workspace: its pid and socket, from `host.lock`."""

    __slots__ = ("path", "pid", "record")

    def __init__(self, pid: int, path: str, record: dict[str, Any] | None = None) -> None:
        self.pid = pid
        self.path = path
        """The socket's path."""
        self.record = record if record is not None else {"pid": pid, "socket": path}
        """The host's record in `host.lock` as JSON (`reach.lock.HostRecord`'s fields:
        `tcp` when it listens on TCP, `started_at`, `root`)."""

    def silent(self, exc: HostGone) -> HabitatError:
        """What a CLI command says when this host did not answer it."""
        return HabitatError(
            f"the host pid {self.pid} did not answer: {exc}; see `habitat host status`"
        )

    def ask(
        self, method: str, target: str, body: Any = None, *, timeout: float | None = None
    ) -> HostAnswer:
        """One request; `timeout` bounds each wait for the answer (None: as long as the
        host takes, for a foreground run). HostGone when the host cannot be reached or
        hangs up."""
        return self.send(method, target, body, timeout=timeout).answer()

    def send(
        self, method: str, target: str, body: Any = None, *, timeout: float | None = None
    ) -> Pending:
        """One request sent, its answer read later (`Pending.answer`), so the caller can do
        something else meanwhile (`Pending.wait`) without a thread."""
        return Pending(self._send(method, target, body, timeout))

    def lines(self, method: str, target: str, body: Any = None) -> Iterator[Any]:
        """The JSON lines of a 200 answer as they come (no read timeout: it lasts as long
        as its work). Another status: HostRefused with the error body. HostGone when the
        host cannot be reached, hangs up, or sends a line that is not JSON."""
        conn = self._send(method, target, body, None)
        try:
            f = _Reader(conn)
            status, fields = _head(f)
            if status != 200:
                raise HostRefused(status, _answer(status, b"".join(_body(f, fields))).refusal())
            pending = b""
            for piece in _body(f, fields):
                pending += piece
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    if line.strip():
                        yield loads(line.decode())
            if pending.strip():  # a last line without its newline
                yield loads(pending.decode())
        except (OSError, ValueError) as exc:
            raise HostGone(str(exc) or type(exc).__name__, sent=True) from exc
        finally:
            conn.close()

    def _send(self, method: str, target: str, body: Any, timeout: float | None) -> _socket.socket:
        payload = b"" if body is None else dumps(body).encode()
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        # `_socket`, not `socket`: the wrapper module costs `enum` and `selectors`, and a
        # request needs none of what it adds.
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(CONNECT_SECONDS if timeout is None else timeout)
            try:
                conn.connect(self.path)
            except OSError as exc:
                raise HostGone(f"cannot connect to {self.path}: {exc}", sent=False) from exc
            conn.settimeout(timeout)
            try:
                conn.sendall(head + payload)
            except OSError as exc:
                raise HostGone(str(exc) or type(exc).__name__, sent=True) from exc
        except BaseException:
            conn.close()
            raise
        return conn


class Pending:
    """A request sent (`PlainHost.send`): wait for its answer with a bound, then read it."""

    __slots__ = ("_conn",)

    def __init__(self, conn: _socket.socket) -> None:
        self._conn = conn

    def wait(self, seconds: float) -> bool:
        """True once the answer (or the host's hang-up) can be read; False after `seconds`."""
        import select  # a C module: no import cost to speak of

        poll = select.poll()
        poll.register(self._conn.fileno(), select.POLLIN)
        return bool(poll.poll(max(0, round(seconds * 1000))))

    def answer(self) -> HostAnswer:
        """The answer, read whole (as long as the host takes); the connection closed.
        HostGone when the host hangs up."""
        try:
            f = _Reader(self._conn)
            status, fields = _head(f)
            return _answer(status, b"".join(_body(f, fields)))
        except OSError as exc:
            raise HostGone(str(exc) or type(exc).__name__, sent=True) from exc
        finally:
            self._conn.close()

    def close(self) -> None:
        """Hang up without the answer (the host cancels the call)."""
        self._conn.close()


class _Reader:
    """The buffered reads an HTTP answer needs, over a socket (`socket.makefile` without
    the `socket` module)."""

    __slots__ = ("_buf", "_conn")

    def __init__(self, conn: _socket.socket) -> None:
        self._conn = conn
        self._buf = b""

    def _fill(self) -> bool:
        chunk = self._conn.recv(1 << 16)
        self._buf += chunk
        return bool(chunk)

    def readline(self) -> bytes:
        while (end := self._buf.find(b"\n")) < 0:
            if not self._fill():
                line, self._buf = self._buf, b""
                return line
        line, self._buf = self._buf[: end + 1], self._buf[end + 1 :]
        return line

    def read(self, size: int) -> bytes:
        while len(self._buf) < size and self._fill():
            pass
        data, self._buf = self._buf[:size], self._buf[size:]
        return data

    def read1(self, size: int) -> bytes:
        if not self._buf:
            self._fill()
        data, self._buf = self._buf[:size], self._buf[size:]
        return data


def _head(f: _Reader) -> tuple[int, dict[str, str]]:
    """The status and the header fields (names lower-cased) of an answer."""
    status_line = f.readline()
    if not status_line:
        raise ConnectionResetError("the host closed the connection before it answered")
    fields = {}
    while (line := f.readline()) not in (b"\r\n", b"\n", b""):
        name, sep, value = line.decode("latin-1").partition(":")
        if sep:
            fields[name.strip().lower()] = value.strip()
    try:
        return int(status_line.split()[1]), fields
    except (IndexError, ValueError):
        raise ConnectionResetError(f"not an HTTP answer: {status_line!r}") from None


def _body(f: _Reader, fields: dict[str, str]) -> Iterator[bytes]:
    """The body's bytes as they arrive: chunked, of a stated length, or up to the close."""
    if "chunked" in fields.get("transfer-encoding", "").lower():
        while size := int(f.readline().split(b";")[0].strip() or b"0", 16):
            yield f.read(size)
            f.readline()  # the chunk's CRLF
        return
    length = fields.get("content-length")
    if length is not None:
        yield f.read(int(length))
        return
    yield from iter(lambda: f.read1(1 << 16), b"")


def _answer(status: int, body: bytes) -> HostAnswer:
    text = body.decode("utf-8", "replace")
    try:
        decoded = loads(text) if text.strip() else None
    except ValueError:
        decoded = None
    return HostAnswer(status, decoded, text)


def live_host(lock: Path | str) -> PlainHost | None:
    """The host that holds `lock` and has published its record, or None (no host runs, or
    it is still starting)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: a host runs
        else:
            return None  # nobody holds it: whatever the file says, no host runs
        record = loads(os.pread(fd, 1 << 16, 0).decode() or "null")
    except ValueError:
        return None  # still being written: a starting host
    finally:
        os.close(fd)
    if not isinstance(record, dict):
        return None
    path, pid = record.get("socket"), record.get("pid")
    if not isinstance(path, str) or not isinstance(pid, int):
        return None
    return PlainHost(pid, path, record)


class StateNotSafe(Exception):
    """The workspace's state folder (or its lock) is one another user may write: a lock
    there could name their socket. The full path refuses such a folder and says why."""


def host_of(root: Path | str) -> PlainHost | None:
    """The live host of the workspace at `root`, or None; StateNotSafe when the state
    folder may not be trusted to name it (every client of the host asks through this)."""
    from .. import state_place

    home = state_place.habitat_home()
    state = state_place.state_dir(str(root))
    lock = os.path.join(state, LOCK_NAME)
    for path in (home, state, lock):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StateNotSafe(str(exc)) from exc
        if state_place.open_to_others(info):
            raise StateNotSafe(f"{path} may be changed by another user")
    return live_host(lock)


LOCK_NAME = "host.lock"
"""The host's lock in its state folder (`reach.files.HostFiles.lock`; a test keeps them one)."""


def starting_host(root: Path, within: float = STARTING_SECONDS) -> PlainHost | None:
    """The host of the workspace at `root` that is starting now (it holds its lock, its record
    is not written yet), once it listens; None when none is starting, or it did not come up
    within `within` seconds. A call after `host_of` found none: a starting host answers the
    call sooner than the call could open the workspace itself, and with one state."""
    import time

    from ..proc.flocks import is_held
    from ..workspace import Workspace
    from .files import HostFiles

    lock = HostFiles(Workspace.for_project(root)).lock
    deadline = time.monotonic() + within
    while is_held(lock) and time.monotonic() < deadline:
        host = live_host(lock)
        if host is not None:
            return host
        time.sleep(0.02)  # polling a file: a starting host tells nobody when it is up
    return None
