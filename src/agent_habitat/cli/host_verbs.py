"""A shell verb answered by the running host, with the standard library alone.

When a host serves the workspace, `habitat run|last|history|…` is a request to it: the
command line is read by `cli.verb_argv`, sent to the host's JSON API over its socket
(`reach.plain_client`), and the JSON answer shown by `cli.shell_views`, the views the
embedded path uses too. No pydantic, rich, anyio or httpx is imported, so the call costs
the interpreter's start and the host's own work.

A foreground run's output is copied to the terminal while it goes on, as on the embedded
path (`cli.attach`): the run's request waits in a thread while this one finds the run the
request started (the tab's newest, newer than the one before) and copies its spool file.

Whatever this path does not answer goes to the full path, which answers it with its own
words: help, a command line the reader refuses, an interactive run (its stdin and terminal
signals are forwarded by `cli.attach`), a host that is gone before it heard the request,
and input the host refuses (400: nothing ran; the full path validates the command line and
names the flag). The host's refusals (404, 409) are printed as the full path prints them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..reach.plain_client import (
    HostAnswer,
    HostGone,
    PlainHost,
    StateNotSafe,
    host_of,
    starting_host,
)
from .shell_views import VIEWS, emit_json_data
from .verb_argv import VerbCall, read_argv

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FOLLOW_SECONDS", "host_verb"]

FOLLOW_SECONDS = 0.05
"""How often a foreground run is looked for, then its spool file read for new output."""
_PREFIX = "shell"


class _Fallback(Exception):
    """The full path answers this call."""


def _root(call: VerbCall) -> Path:
    from ..workspace import find_project_root

    if call.project is not None:
        from ..errors import UsageError
        from ..project_folder import a_project

        try:
            return a_project(call.project, named="--project")
        except UsageError:
            raise _Fallback from None  # the full path names the bad flag
    return find_project_root()


def _host(root: Path) -> PlainHost | None:
    try:
        host = host_of(root)
    except StateNotSafe as exc:
        raise _Fallback from exc  # the full path refuses the folder and says why
    # One started behind the command before (`cli.host_start`) may be on its way up.
    return host if host is not None else starting_host(root)


def _error(message: str, as_json: bool) -> int:
    """A refusal, as `cli.common.report_error` prints one (exit 1)."""
    if as_json:
        sys.stderr.write(json.dumps({"error": message, "field": None}) + "\n")
    else:
        print(f"habitat: {message}", file=sys.stderr)
    return 1


class _Spool:
    """Copies what a run's spool file gained to stdout (the freed middle is skipped)."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.offset = 0

    def pump(self) -> None:
        if self.path is None:
            return
        from ..proc.spool import Spool

        spool = Spool(Path(self.path))
        for offset, chunk in spool.chunks(self.offset, spool.size()):
            sys.stdout.buffer.write(chunk)
            self.offset = offset + len(chunk)
        sys.stdout.buffer.flush()


def _newest(host: PlainHost, tab: str) -> int | None:
    """The index of the tab's newest run; None when it has none."""
    answer = host.ask("POST", f"/api/{_PREFIX}_last", {"tab": tab, "tail_lines": 0})
    if answer.status == 404:
        return None
    if answer.status != 200 or not isinstance(answer.data, dict):
        raise _Fallback
    return int(answer.data["index"])


def _followed(host: PlainHost, command: str, body: dict[str, Any]) -> tuple[HostAnswer, bool]:
    """The call's answer, with the output of the run it started copied as it comes; and
    whether it was (the view then does not print the output again)."""
    import threading  # only a foreground run needs a second thread

    tab = str(body.get("tab", "main"))
    before = _newest(host, tab)
    outcome: list[HostAnswer | BaseException] = []

    def request() -> None:
        try:
            outcome.append(host.ask("POST", f"/api/{_PREFIX}_{command}", body))
        except BaseException as exc:  # handed to the main thread, which raises it
            outcome.append(exc)

    worker = threading.Thread(target=request, name="habitat-run", daemon=True)
    worker.start()
    spool = _Spool()
    # A quick command is over before the first look: its output is copied from the spool
    # once, at the end, and the host is asked nothing more meanwhile.
    worker.join(FOLLOW_SECONDS)
    while worker.is_alive():
        if spool.path is None:
            last = host.ask("POST", f"/api/{_PREFIX}_last", {"tab": tab, "tail_lines": 0})
            data = last.data
            if last.status == 200 and isinstance(data, dict):
                if before is None or int(data["index"]) > before:
                    spool.path = str(data["spool"])
        spool.pump()
        worker.join(FOLLOW_SECONDS)
    (answer,) = outcome
    if isinstance(answer, BaseException):
        raise answer
    if answer.status == 200 and isinstance(answer.data, dict):
        spool.path = str(answer.data.get("spool", spool.path))
        spool.pump()
    return answer, True


def _serve(call: VerbCall) -> int | None:
    root = _root(call)
    host = _host(root)
    if host is None:
        return None
    view = VIEWS[call.command]
    stream = view.streams and not call.json and not call.body.get("background")
    name = f"{_PREFIX}_{call.command}"
    try:
        if stream:
            answer, streamed = _followed(host, call.command, call.body)
        else:
            answer, streamed = host.ask("POST", f"/api/{name}", call.body), False
    except HostGone as exc:
        if not exc.sent:
            return None  # gone before it heard the call: the full path finds no host
        return _error(
            f"the workspace host (pid {host.pid}) did not answer {name}: {exc}; "
            "see `habitat host status`, or `habitat host stop` to go on without it",
            call.json,
        )
    if answer.status == 200 and isinstance(answer.data, dict):
        if call.json:
            emit_json_data(answer.data)
        else:
            view.show(answer.data, streamed, root)
        return view.exit_code(answer.data)
    if answer.status == 400:
        return None  # refused input, nothing ran: the full path names the flag
    data = answer.data
    message = str(data["error"]) if isinstance(data, dict) and "error" in data else None
    if answer.status in (404, 409) and message is not None:
        return _error(message, call.json)
    detail = message if message is not None else answer.text.strip()
    return _error(f"the host answered {name} with HTTP {answer.status}: {detail}", call.json)


def host_verb(argv: list[str]) -> int | None:
    """The exit code of the shell verb on `argv` as the running host answered it, or None
    when the full path must answer (no host runs, or see the module docstring)."""
    call = read_argv(argv)
    if call is None or call.body.get("interactive"):
        return None
    try:
        return _serve(call)
    except _Fallback:
        return None
    except KeyboardInterrupt:
        # Our connection closes as we exit: the host cancels the call, as Ctrl-C does.
        return 130
