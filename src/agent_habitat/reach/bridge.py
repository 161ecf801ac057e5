"""`habitat mcp` (not embedded): the client's stdio relayed to the workspace host, line for line.

The bridge holds one line exchange with the host (`reach/link.py`, served by
`host/mcp_stream.py` on `/mcp`) and copies lines both ways as they come: requests,
responses, progress, list_changed, resource updates, the host's own requests such as
`roots/list`, both protocol eras. It parses each line only to keep the books it needs to
survive the host: which of the client's requests the current host has taken and not yet
answered, and the client's `initialize`.

When the host goes away — killed, crashed, stopped — the bridge starts it again, replays
the client's `initialize` and `notifications/initialized` (their answers are swallowed;
the client already has them) and goes on. A line the old host never took (the write
failed: it was already gone) goes to the new one. A request the old host took and did not
answer gets an answer saying it stopped (a tool error for `tools/call`, else a JSON-RPC
error): its outcome is unknown. The client sees one continuous session; its runs went on
in their own sessions meanwhile. Subscriptions are not carried over: a 2026-era
`subscriptions/listen` in flight ends with that error (the client listens again), and
2025-era `resources/subscribe` is not replayed.

`project_open` of a folder outside the current workspace moves the session: the bridge
finds or starts that workspace's host, replays the handshake there, sends the call to it,
and tells the client `notifications/tools/list_changed`. The old host answers what it still
owes and is then let go; it never sees the `project_open`.
"""

from __future__ import annotations

import json
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from agent_habitat.errors import HabitatError
from agent_habitat.workspace import scm_root

from .link import LinkClosed

__all__ = [
    "HOST_RESTARTED",
    "HOST_STOPPED",
    "Bridge",
    "Connect",
    "LineLink",
    "project_open_plan",
    "restarted_reply",
]

Message = dict[str, Any]


class LineLink(Protocol):
    """A line exchange with a host (`reach.link.Link`; tests pass a fake)."""

    def send_line(self, line: bytes) -> None:
        """Write one line; `LinkClosed` when the host is gone (it never took the line)."""

    def lines(self) -> Iterator[bytes]:
        """The host's lines until it goes away (or `close`)."""

    def close(self) -> None:
        """End the exchange at once, from any thread."""


Connect = Callable[[Path], LineLink]
"""A line exchange with the host of the workspace at that root (started when none runs)."""

HOST_RESTARTED = (
    "the habitat host stopped while this request was in flight and has been restarted; "
    "the request's outcome is unknown (a command it started may still be running: check "
    "shell_scene / shell_last). Send it again if needed."
)
HOST_STOPPED = (
    "the habitat host of the workspace this session left stopped while this request was "
    "in flight; the request's outcome is unknown (check shell_scene / shell_last there)."
)
_INTERNAL_ERROR = -32603
# Restarting a host that dies again at once must end somewhere.
_MAX_ATTEMPTS = 3
_LIST_CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def restarted_reply(request: Message, why: str = HOST_RESTARTED) -> Message:
    """The answer to a request the dead host took with it."""
    if request.get("method") == "tools/call":
        result = {"content": [{"type": "text", "text": why}], "isError": True}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}
    error = {"code": _INTERNAL_ERROR, "message": why}
    return {"jsonrpc": "2.0", "id": request["id"], "error": error}


def _encode(msg: Message) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _parse(line: bytes) -> Message | None:
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None  # the host's screen answers it
    return msg if isinstance(msg, dict) else None


def _key(request_id: Any) -> str:
    # JSON ids compared as JSON: 1 and "1" are different requests.
    return json.dumps(request_id)


def _existing_dir(path: str, cwd: Path | None = None) -> Path | None:
    # As `project.existing_dir` resolves it, but relative to the client's cwd (the bridge's).
    given = Path(path).expanduser()
    resolved = (given if cwd is None else cwd / given).resolve()
    return resolved if resolved.is_dir() else None


def _is_project(path: Path) -> bool:
    # Imported here: the bridge's own start stays free of pydantic.
    from agent_habitat.errors import UsageError
    from agent_habitat.project import a_project

    try:
        a_project(path)
    except UsageError:
        return False
    return True


# How the host's SDK writes a message (pydantic, fields in this order): read the kind and id
# from the head of the line, not by parsing a result that may be hundreds of kilobytes.
_ANSWER_HEAD = re.compile(
    rb'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(result|error|method)"'
)
_NOTIFICATION_HEAD = b'{"jsonrpc":"2.0","method":'


def _answer_key(line: bytes) -> str | None:
    """The `_key` of the request this line from the host answers; None if it is not an
    answer (a notification, or a request of the host's own)."""
    if line.startswith(_NOTIFICATION_HEAD):
        return None
    if head := _ANSWER_HEAD.match(line):
        return None if head.group(2) == b"method" else _key(json.loads(head.group(1)))
    msg = _parse(line)  # written some other way: read it whole
    if msg is None or "method" in msg or "id" not in msg:
        return None
    return _key(msg["id"])


def _is_request(msg: Message) -> bool:
    return "method" in msg and "id" in msg


class _Conn:
    """One host the session talks (or talked) to, and what it owes the client.

    A plain class: `dataclasses` imports `inspect`, a tenth of the bridge's start."""

    def __init__(self, link: LineLink, root: Path) -> None:
        self.link = link
        self.root = root
        self.pending: dict[str, Message] = {}
        self.swallow: set[str] = set()
        """Answers meant for the bridge (the replayed `initialize`)."""
        self.replayed = threading.Event()
        self.done = threading.Event()
        """Its reader ended: every answer it sent has been passed on."""
        self.leaving = False
        """The session moved to another workspace: let go once it owes nothing."""
        self.settled = False


def _warn(text: str) -> None:
    # As `logging` would say it (not imported: a fifth of the bridge's start).
    print(f"habitat WARNING {__name__}: {text}", file=sys.stderr, flush=True)


class Bridge:
    """Relays one client's session to a host, restarting or moving it as needed.

    Threads, not an event loop: the relay (one thread: the client's lines and the hosts'
    ends, in order, as events on one queue) and a reader per host; `write` is called from
    both, one whole line at a time.
    """

    def __init__(
        self,
        connect: Connect,
        root: Path,
        write: Callable[[bytes], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._connect = connect
        self._root = root
        self._write = write
        self._on_error = on_error
        self._initialize: Message | None = None
        self._initialized = False
        self._replays = 0
        self._conn: _Conn | None = None
        self._events: queue.SimpleQueue[tuple[bytes | None, _Conn | None]] = queue.SimpleQueue()
        self._closed = False
        self.error: BaseException | None = None
        self.restarts = 0

    def resume(
        self,
        initialize: Message | None,
        initialized: bool,
        current: LineLink | None = None,
        owed: dict[str, Message] | None = None,
    ) -> None:
        """Go on with a session a host served on the client's own stdio (`reach/handoff`),
        before `start`: the client's handshake, replayed to the next host; `current`, that
        host's connection when it is still up and answers what it `owed` through it (a
        session moving to another workspace), else a host is found or started."""
        self._initialize = initialize
        self._initialized = initialized
        if current is not None:
            conn = _Conn(current, self._root)
            conn.pending = dict(owed or {})
            self._conn = conn
            threading.Thread(
                target=self._read, args=(conn,), name="bridge-read", daemon=True
            ).start()

    def start(self) -> None:
        """Connect (in the relay thread) and relay what `put` gives it."""
        threading.Thread(target=self._relay, name="bridge-relay", daemon=True).start()

    def put(self, line: bytes) -> None:
        """One line from the client."""
        self._events.put((line, None))

    def close(self) -> None:
        """The client left: hang up on the current host at once (what it owes is moot)."""
        self._closed = True
        self._events.put((None, None))  # the relay thread ends, unless busy starting a host
        if self._conn is not None:
            self._conn.link.close()

    def run(self, lines: Iterable[bytes]) -> None:
        """Relay until `lines` (the client's) ends; that end stops everything at once."""
        self.start()
        for line in lines:
            self.put(line)
        self.close()

    def _relay(self) -> None:
        try:
            if self._conn is None and self._initialize is not None:
                self._restart(self._root)  # a session taken over: its handshake replayed
            elif self._conn is None:
                self._conn = self._attach(self._root, replay=False)
            while not self._closed:
                line, died = self._events.get()
                if died is not None:
                    self._settle(died)
                elif line is not None:
                    self._from_client(line)
        except BaseException as exc:  # the thread's end, said to its owner
            self.error = exc
            if self._on_error is not None and not self._closed:
                self._on_error(exc)

    def _from_client(self, line: bytes) -> None:
        msg = _parse(line)
        if msg is not None:
            moved = self._maybe_move(msg, line)
            if moved is None:
                return
            line = moved
        for _ in range(_MAX_ATTEMPTS):
            conn = self._conn
            assert conn is not None
            request = msg if msg is not None and _is_request(msg) else None
            key = _key(request["id"]) if request is not None else None
            if request is not None and key is not None:
                conn.pending[key] = request  # before the write: its answer may come at once
            try:
                conn.link.send_line(line)
            except LinkClosed:
                # Never taken: the host was gone already. The new one gets it.
                if key is not None:
                    conn.pending.pop(key, None)
                self._settle(conn)
                continue
            if msg is not None:
                self._noted(msg, conn)
            return
        if msg is not None and _is_request(msg):
            self._write(_encode(restarted_reply(msg, "the habitat host keeps failing")))

    def _noted(self, msg: Message, conn: _Conn) -> None:
        method = msg.get("method")
        if method == "initialize" and "id" in msg:
            self._initialize = msg
        elif method == "notifications/initialized":
            self._initialized = True
        elif method == "notifications/cancelled":
            # A cancelled request gets no answer; the host owes nothing for it any more.
            params = msg.get("params")
            if isinstance(params, dict) and "requestId" in params:
                conn.pending.pop(_key(params["requestId"]), None)

    def _attach(self, root: Path, *, replay: bool) -> _Conn:
        """A line exchange with the host of `root`, its reader running, the handshake
        replayed when the client has made one."""
        link = self._connect(root)
        conn = _Conn(link, root)
        threading.Thread(target=self._read, args=(conn,), name="bridge-read", daemon=True).start()
        if not replay or self._initialize is None:
            return conn
        self._replays += 1
        replay_key = _key(replay_id := f"habitat-bridge-replay-{self._replays}")
        conn.swallow.add(replay_key)
        try:
            link.send_line(_encode({**self._initialize, "id": replay_id}))
            # A host that takes the line but never answers.
            if not conn.replayed.wait(60):
                raise LinkClosed("the host did not answer the replayed handshake in 60 s")
            if replay_key in conn.swallow:
                raise LinkClosed("the host went away before it answered")
            if self._initialized:
                link.send_line(_encode(_INITIALIZED))
        except LinkClosed as exc:
            conn.settled = True  # never the session's: nothing to answer, nothing to restart
            link.close()
            raise LinkClosed(f"the new host failed during the handshake replay: {exc}") from exc
        return conn

    def _read(self, conn: _Conn) -> None:
        try:
            for line in conn.link.lines():
                key = _answer_key(line)
                if key is not None:
                    if key in conn.swallow:
                        conn.swallow.discard(key)
                        conn.replayed.set()
                        continue
                    conn.pending.pop(key, None)
                self._write(line)
                if conn.leaving and not conn.pending:
                    break  # a host the session left has answered all it owed
        finally:
            conn.done.set()
            conn.replayed.set()  # a handshake waiting on a dead host wakes (and fails)
            self._events.put((None, conn))

    def _settle(self, conn: _Conn) -> None:
        """`conn`'s host is gone (or let go): answer what it owed; restart it if current."""
        if conn.settled:
            return
        conn.settled = True
        # Only for a host that is gone (its reader sees the end) or owes nothing (closed
        # below): answers it did send are passed on before any request is given up.
        conn.done.wait()
        conn.link.close()
        why = HOST_STOPPED if conn.leaving else HOST_RESTARTED
        owed = list(conn.pending.values())
        conn.pending.clear()
        if conn is self._conn:
            self._restart(conn.root)
        for request in owed:
            self._write(_encode(restarted_reply(request, why)))

    def _restart(self, root: Path) -> None:
        for attempt in range(1, _MAX_ATTEMPTS + 1):
            try:
                self._conn = self._attach(root, replay=True)
            except LinkClosed as exc:
                _warn(f"restarting the host failed (attempt {attempt}): {exc}")
                continue
            self.restarts += 1
            _warn(f"the habitat host was restarted (restart {self.restarts})")
            return
        raise LinkClosed(f"the habitat host of {root} keeps failing to start")

    def _maybe_move(self, msg: Message, line: bytes) -> bytes | None:
        """`project_open` outside the workspace: move there first. Returns the line to send
        (a relative path made absolute: the host's cwd is not the client's), None when it
        was answered here (the move failed)."""
        old = self._conn
        assert old is not None
        plan = project_open_plan(msg, old.root)
        if plan is None:
            return line
        msg, root = plan
        line = _encode(msg)
        if root is None:
            return line  # not a move: the host answers it (or refuses it, naming the fix)
        try:
            new = self._attach(root, replay=True)
        except HabitatError as exc:
            why = f"project_open: could not move the session to the host of {root}: {exc}"
            self._write(_encode(restarted_reply(msg, why)))
            return None
        old.leaving = True
        self._conn = new
        if not old.pending:
            old.link.close()  # its reader ends; `_settle` finds nothing owed
        if self._initialize is not None:
            self._write(_LIST_CHANGED)  # the new host's tools may differ
        return line


def project_open_plan(
    msg: Message, root: Path, cwd: Path | None = None
) -> tuple[Message, Path | None] | None:
    """What a `project_open` call needs before a host of `root` takes it, for a client
    whose cwd is `cwd` (the process's own when None): None when `msg` is no such call with
    a folder that exists (sent as it is: the host says what is wrong); else the call with
    its path made absolute (a host's cwd is not the client's) and the root of the workspace
    the session moves to, None when it stays (a folder inside the workspace, or no project:
    the host refuses it, naming the fix, and no host starts for it)."""
    params = msg.get("params")
    if msg.get("method") != "tools/call" or not isinstance(params, dict):
        return None
    arguments = params.get("arguments")
    if params.get("name") != "project_open" or not isinstance(arguments, dict):
        return None
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    target = _existing_dir(path, cwd)
    if target is None:
        return None
    msg = {**msg, "params": {**params, "arguments": {**arguments, "path": str(target)}}}
    if target == root or root in target.parents or not _is_project(target):
        return msg, None
    return msg, scm_root(target) or target
