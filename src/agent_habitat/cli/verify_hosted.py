"""`habitat verify` through the workspace host, with the standard library alone.

The host keeps what makes a verify fast warm (the type daemon, the warm pytest, HEAD's
baselines, the import graph and test data), so a person's second verify is as quick as the
agent's. The request goes over the host's socket as `verify_run` (answered at once with the
task); then `/api/verify/wait` blocks until the verdict and answers the whole epoch, whose
climb result is printed as the one-shot path prints it, with the same exit code. Ctrl-C
(or SIGTERM) cancels the task on the host before exiting 130. `--background` stops after
the hand-over: exit 5, queued, no verdict yet. It imports neither argparse nor `pathlib`,
`typing`, `json` or `signal` (`_signal` is its C core; `--json` is written by
`reach.quick_json`), as `cli.verify_fast` reads the command line without them.

None from `verify_through_host` means "take the one-shot path": no host runs and none is
to be started, or the host is gone before it took the request.
"""

from __future__ import annotations

import sys
import time

from ..reach.plain_client import HostGone, HostRefused, PlainHost, StateNotSafe, host_of
from .verify_exit import EXIT_CODES, QUEUED

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    import signal as _signal  # the same functions and numbers, typed
    from typing import Any
else:
    import _signal  # `signal` less its enums: `enum` and `functools` cost 7-29 ms here

__all__ = ["verify_through_host", "with_host_start"]

_WAIT = "/api/verify/wait"  # host/verify_wait.py (not imported: it brings starlette)
# HTTP status of a refusal → exit code: bad input and bad configuration are the caller's to fix.
_REFUSED = {400: 2, 422: 2}
_ANSWER_SECONDS = 30.0  # verify_run answers at once with the task; the verdict is waited on


def _say(as_json: bool, message: str, field: str | None = None) -> None:
    if as_json:
        import json

        sys.stderr.write(json.dumps({"error": message, "field": field}) + "\n")
    else:
        sys.stderr.write(f"habitat: {message}\n")


def _refused(as_json: bool, status: int, answer: Any) -> int:
    body = answer if isinstance(answer, dict) else {}
    message = str(body.get("error") or f"the workspace host answered HTTP {status}")
    field = body.get("field")
    # The host names the argument as the tool does; here it is a flag.
    shown = f"--{field.replace('_', '-')}: {message}" if isinstance(field, str) else message
    _say(as_json, shown, field if isinstance(field, str) else None)
    return _REFUSED.get(status, 1)


def _start(root: str) -> PlainHost:
    from pathlib import Path

    from ..reach.launcher import ensure_host  # only when a host is to be started

    handle = ensure_host(Path(root))
    if handle.started and sys.stderr.isatty():
        sys.stderr.write(
            f"habitat: started the workspace host (pid {handle.record.pid}); later verifies "
            "reuse its warm checkers (`habitat host stop` ends it, or it exits when idle)\n"
        )
    return PlainHost(handle.record.pid, handle.record.socket)


def _as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def verify_through_host(
    root: str, body: dict[str, Any], *, as_json: bool, background: bool, start: bool
) -> int | None:
    """Hand the verify to the workspace host and print its verdict (`as_json`: as JSON,
    errors too); see the module."""
    try:
        host = host_of(root)
    except StateNotSafe:
        return None  # verifying here opens the workspace, which refuses it and says why
    host_start = 0.0
    if host is None:
        if not start:
            return None
        began = time.monotonic()
        host = _start(root)
        host_start = time.monotonic() - began
    try:
        answer = host.ask("POST", "/api/verify_run", body, timeout=_ANSWER_SECONDS)
    except HostGone:
        return None  # it never took the request: verifying here is always right
    ticket = answer.data
    if answer.status != 200 or not isinstance(ticket, dict):
        return _refused(as_json, answer.status, answer.refusal())
    if background:
        return _queued(as_json, ticket)
    # Once the verdict is printed the process has nothing left to do: it exits without the
    # interpreter's teardown (a tenth of this path's CPU, on the way to the prompt).
    from . import end_without_teardown

    end_without_teardown()
    return _wait(as_json, host, ticket, host_start)


def _queued(as_json: bool, ticket: dict[str, Any]) -> int:
    if as_json:
        from ..reach.quick_json import dumps_indented

        sys.stdout.write(dumps_indented(ticket) + "\n")
    else:
        sys.stdout.write(
            f"queued: epoch {ticket['epoch']} ({ticket['task']}), no verdict yet: "
            "`habitat status` says how it ends, `habitat cancel` stops it\n"
        )
    return QUEUED


def _wait(as_json: bool, host: PlainHost, ticket: dict[str, Any], host_start: float) -> int:
    task = str(ticket["task"])
    previous = None
    try:
        previous = _signal.signal(_signal.SIGTERM, _as_interrupt)
    except ValueError:
        pass  # not the main thread (a test's): only the main thread takes signals
    line = _LiveLine(f"epoch {ticket['epoch']}") if sys.stderr.isatty() else None
    epoch: Any = None
    try:
        for message in host.lines("POST", _WAIT, {"task": task}):
            if "epoch" in message:
                epoch = message["epoch"]
                # The last line: the answer's end (a chunk the host sends once its loop
                # comes back to it, 5 ms later on a quiet machine) is not waited for.
                break
            elif "task" in message and "state" in message:
                epoch = message  # a host started before the route streamed: the epoch alone
            elif line is not None and isinstance(message.get("progress"), dict):
                line.show(message["progress"])
    except HostRefused as exc:
        if exc.status == 404 and not (isinstance(exc.answer, dict) and exc.answer.get("field")):
            _say(
                as_json,
                f"the workspace host runs an older habitat without {_WAIT}; verify {task} goes "
                "on there (`habitat status` tells); `habitat host stop` lets the next verify "
                "start a current one",
            )
            return 1
        return _refused(as_json, exc.status, exc.answer)
    except KeyboardInterrupt:
        try:
            host.ask("POST", "/api/verify_cancel", {"task": task}, timeout=10.0)
        except HostGone:
            pass  # gone already: nothing of it runs on
        _say(as_json, f"interrupted: verify {task} cancelled")
        return 130
    except HostGone as exc:
        _say(
            as_json,
            f"the workspace host did not answer {_WAIT}: {exc}; "
            "the verify's outcome is unknown: `habitat status` tells",
        )
        return 1
    finally:
        if line is not None:
            line.clear()
        if previous is not None:
            _signal.signal(_signal.SIGTERM, previous)
    if not isinstance(epoch, dict):
        _say(
            as_json,
            f"the workspace host ended verify {task} without its epoch; `habitat status` tells",
        )
        return 1
    return _verdict(as_json, epoch, host_start)


class _LiveLine:
    """One line on the terminal's stderr, rewritten as the rungs go (the one-shot path
    shows a live table; this is its light cousin), cleared before the verdict prints."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.started = time.monotonic()
        self.shown = False

    def show(self, progress: dict[str, Any]) -> None:
        done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
        elapsed = time.monotonic() - self.started
        message = progress.get("message")
        if message == "running" and total and done >= total:
            message = "concluding"  # every rung is done: the runner writes the verdict
        elif message in ("running", "queued"):  # no rung yet: the runner's own work
            message = "snapshot, warm-up, selection" if message == "running" else "queued"
        text = f"verify {self.what} · {done}/{total} rungs · {message} · {elapsed:.1f}s"
        sys.stderr.write("\r\x1b[2K" + text[:200])
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def with_host_start(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The result with the host this verify started counted in its `waited` line: the person
    waited for it too (on wcwidth 0.2.13 a fresh host took 3.8 s of a 7.5 s verify whose line
    said 3.6 s)."""
    timing = result.get("timing")
    if seconds <= 0 or not isinstance(timing, dict):
        return result
    wall = float(timing.get("wall_s") or 0.0) + seconds
    start = float(timing.get("start_s") or 0.0) + seconds
    return result | {"timing": timing | {"wall_s": wall, "start_s": start}}


def _verdict(as_json: bool, epoch: dict[str, Any], host_start: float = 0.0) -> int:
    result = epoch.get("result")
    state = str(epoch.get("state"))
    if not isinstance(result, dict):
        _say(as_json, f"verify {epoch.get('task')} ended {state} without a result")
        return EXIT_CODES.get(state, 1)
    stale = list(epoch.get("changed") or []) if epoch.get("stale") else None
    if as_json:
        from ..reach.quick_json import dumps_indented  # `json.dumps(…, indent=2)`'s text

        # The climb's result, as the one-shot path prints it; `stale` only when the tree
        # moved while it climbed (the exit code then says not green, whatever it found).
        shown = result | {"stale": stale} if stale else result
        sys.stdout.write(dumps_indented(shown) + "\n")
    else:
        from .verdict_text import render_verdict

        shown = with_host_start(result, host_start)
        render_verdict(shown, sys.stdout, colour=sys.stdout.isatty(), stale=stale)
        for note in epoch.get("notes") or []:
            sys.stdout.write(f"    note: {note}\n")
    return EXIT_CODES.get(state, 1)
