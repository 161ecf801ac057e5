"""A small Language Server Protocol client over a server's stdio, for the warm checkers.

Only what a type check needs: `initialize`, documents opened, changed and closed with their
full text, `workspace/didChangeWatchedFiles` for files on disk, and diagnostics, pulled
(`textDocument/diagnostic`); a server's pushed `publishDiagnostics` go unread. The server's
own requests (configuration, registrations, progress) are answered at once.

It is synchronous and thread-safe on purpose: a reader thread owns the server's stdout, so
the server never blocks on a full pipe between checks, and the client needs no task group
that outlives a rung. The async callers run `check`-sized calls in a worker thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

__all__ = ["LspClient", "LspError"]

logger = logging.getLogger(__name__)

Settings = Callable[[str | None], Any]
"""The answer to `workspace/configuration` for one section."""


class LspError(Exception):
    """The server failed, exited, or did not answer in time."""


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: Any = None


def _waited(
    done: threading.Event,
    timeout: float,
    counts: Callable[[], bool] | None,
    bound: float | None,
) -> bool:
    """Whether `done` was set within `timeout` counted seconds (all of them without
    `counts`), and within `bound` seconds in all."""
    if counts is None:
        return done.wait(timeout)
    spent = 0.0
    began = last = time.monotonic()
    while not done.wait(min(0.5, max(timeout - spent, 0.01))):
        now = time.monotonic()
        if counts():
            spent += now - last
        last = now
        if spent >= timeout or (bound is not None and now - began >= bound):
            return False
    return True


class LspClient:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        log: Path,
        settings: Settings,
    ) -> None:
        self._log = open(log, "ab")
        try:
            self.proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                # Its own session, so the one function that kills (proc.kill_tree) takes the
                # server and whatever it started (pyright's Node workers) as one group.
                start_new_session=True,
            )
        except BaseException:  # a server that cannot start leaves no log file open
            self._log.close()
            raise
        self._settings = settings
        self._write_lock = threading.Lock()
        self._state = threading.Condition()
        self._next_id = 0
        self._pending: dict[int, _Pending] = {}
        self._closed: str | None = None
        self.capabilities: dict[str, Any] = {}
        self._reader = threading.Thread(target=self._read_loop, name="lsp-reader", daemon=True)
        self._reader.start()

    # --- the wire -------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            with self._write_lock:
                stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise LspError(f"the server's input is closed ({exc})") from exc

    @staticmethod
    def _read_message(stream: IO[bytes]) -> dict[str, Any] | None:
        length = -1
        while True:
            line = stream.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
        if length < 0:
            return {}
        body = stream.read(length)
        if len(body) < length:
            return None
        data = json.loads(body)
        return data if isinstance(data, dict) else {}

    def _read_loop(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        why = "the server closed its output"
        try:
            while (message := self._read_message(stdout)) is not None:
                self._dispatch(message)
        except (OSError, ValueError) as exc:  # a garbled frame ends the session
            why = f"unreadable output from the server ({exc})"
        finally:
            stdout.close()
        with self._state:
            code = self.proc.poll()
            self._closed = why if code is None else f"{why} (exit {code})"
            for pending in self._pending.values():
                pending.error = {"message": self._closed}
                pending.done.set()
            self._state.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None and "id" in message:  # a response to one of ours
            with self._state:
                pending = self._pending.pop(int(message["id"]), None)
            if pending is not None:
                pending.result, pending.error = message.get("result"), message.get("error")
                pending.done.set()
            return
        if "id" in message:  # the server's own request: answered from here
            with contextlib.suppress(LspError):
                self._send({"id": message["id"], "result": self._answer(method, message)})

    def _answer(self, method: str | None, message: dict[str, Any]) -> Any:
        if method == "workspace/configuration":
            items = (message.get("params") or {}).get("items") or []
            return [self._settings(item.get("section")) for item in items]
        if method == "workspace/workspaceFolders":
            return None
        return None  # registrations, progress tokens, window requests: acknowledged

    # --- requests -------------------------------------------------------------------

    def request(self, method: str, params: Any, timeout: float) -> Any:
        pending = self.start_request(method, params)
        return self.wait(pending, method, timeout)

    def start_request(self, method: str, params: Any) -> tuple[int, _Pending]:
        pending = _Pending()
        with self._state:
            if self._closed:
                raise LspError(self._closed)
            self._next_id += 1
            ident = self._next_id
            self._pending[ident] = pending
        self._send({"id": ident, "method": method, "params": params})
        return ident, pending

    def wait(
        self,
        started: tuple[int, _Pending],
        method: str,
        timeout: float,
        *,
        counts: Callable[[], bool] | None = None,
        bound: float | None = None,
    ) -> Any:
        """The request's answer; LspError when none came within `timeout`. With `counts`,
        only the seconds during which it says True count against `timeout` (a start left
        at background priority is slow, not stuck), and `bound` caps the whole wait."""
        ident, pending = started
        if not _waited(pending.done, timeout, counts, bound):
            with self._state:
                self._pending.pop(ident, None)
            with contextlib.suppress(LspError):
                self.notify("$/cancelRequest", {"id": ident})
            raise LspError(f"{method}: no answer within {timeout:.0f} s")
        if pending.error is not None:
            raise LspError(f"{method}: {pending.error.get('message', pending.error)}")
        return pending.result

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    @property
    def closed(self) -> str | None:
        """Why the session ended, None while it serves."""
        with self._state:
            return self._closed

    def close(self) -> None:
        """`shutdown` and `exit`, politely and briefly; the caller kills what is left."""
        with contextlib.suppress(LspError):
            self.request("shutdown", None, timeout=2.0)
            self.notify("exit", None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2.0)
        # Only stdin: the reader thread owns stdout and ends on its EOF once the server is gone.
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()

    def reap(self) -> None:
        """After the server is gone (closed or killed): its exit status and the reader."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)
        self._reader.join(timeout=5.0)
        self._log.close()
