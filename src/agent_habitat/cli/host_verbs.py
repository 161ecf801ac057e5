"""A shell verb answered by the running host, with the standard library alone.

When a host serves the workspace, `habitat run|last|history|…` is a request to it: the
command line is read by `cli.verb_argv`, sent to the host's JSON API over its socket
(`reach.plain_client`), and the JSON answer shown by `cli.shell_views`, the views the
embedded path uses too. No pydantic, rich, anyio or httpx is imported, so the call costs
the interpreter's start and the host's own work.

A foreground run's output is copied to the terminal while it goes on, as on the embedded
path (`cli.attach`): while the run's request waits for its answer, this finds the run it
started (the tab's newest, newer than any run on disk when the request was sent: a run's
spool folder is named by its id, which only grows) and copies its spool file. A quick
command is answered before the first look: it costs one request.

Whatever this path does not answer goes to the full path, which answers it with its own
words: help, a command line the reader refuses, an interactive run (its stdin and terminal
signals are forwarded by `cli.attach`), a host that is gone before it heard the request,
and input the host refuses (400: nothing ran; the full path validates the command line and
names the flag). The host's refusals (404, 409) are printed as the full path prints them.
"""

from __future__ import annotations

import os
import sys

from ..reach.plain_client import (
    HostAnswer,
    HostGone,
    PlainHost,
    StateNotSafe,
    host_of,
    starting_host,
)
from ..reach.quick_json import dumps
from .shell_views import VIEWS, emit_json_data
from .verb_argv import VerbCall, read_argv

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FOLLOW_SECONDS", "host_verb"]

FOLLOW_SECONDS = 0.05
"""How often a foreground run is looked for, then its spool file read for new output."""
_PREFIX = "shell"
_ROUTES = {"project": "project_scene", "trust": "project_trust"}
"""The project verbs the CLI has, by command: their routes (the shell verbs' are `shell_…`)."""


class _Fallback(Exception):
    """The full path answers this call."""


def _root(call: VerbCall) -> str:
    from .. import state_place

    if call.project is not None:
        from ..errors import UsageError
        from ..project_folder import named_project

        try:
            return named_project(call.project, "--project")
        except UsageError:
            raise _Fallback from None  # the full path names the bad flag
    return state_place.project_root()


def _spool_dir(root: str) -> str:
    from .. import state_place

    return os.path.join(state_place.state_dir(root), "spool")


def _host(root: str) -> PlainHost | None:
    try:
        host = host_of(root)
    except StateNotSafe as exc:
        raise _Fallback from exc  # the full path refuses the folder and says why
    if host is not None:
        return host
    # One started behind the command before (`cli.host_start`) may be on its way up.
    from pathlib import Path

    return starting_host(Path(root))


def _error(message: str, as_json: bool) -> int:
    """A refusal, as `cli.common.report_error` prints one (exit 1)."""
    if as_json:
        sys.stderr.write(dumps({"error": message, "field": None}) + "\n")
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

        spool = Spool(self.path)
        for offset, chunk in spool.chunks(self.offset, spool.size()):
            sys.stdout.buffer.write(chunk)
            self.offset = offset + len(chunk)
        sys.stdout.buffer.flush()


_RUN_DIR = "run-"
"""A run's spool folder is `run-<id>` (`shell.run_store`), its id an AUTOINCREMENT."""


def _run_id(spool: str) -> int | None:
    """The id of the run whose spool file is `spool` (`…/run-<id>/output`)."""
    name = os.path.basename(os.path.dirname(spool))
    digits = name[len(_RUN_DIR) :]
    return int(digits) if name.startswith(_RUN_DIR) and digits.isdigit() else None


def _newest_on_disk(spool_dir: str) -> int:
    """The highest run id with a spool folder in `spool_dir` (0 when none)."""
    try:
        names = os.listdir(spool_dir)
    except OSError:
        return 0
    ids = [_run_id(os.path.join(spool_dir, name, "output")) for name in names]
    return max((i for i in ids if i is not None), default=0)


def _followed(
    host: PlainHost, command: str, body: dict[str, Any], spool_dir: str
) -> tuple[HostAnswer, bool]:
    """The call's answer, with the output of the run it started copied as it comes; and
    whether it was (the view then does not print the output again)."""
    tab = str(body.get("tab", "main"))
    before = _newest_on_disk(spool_dir)
    pending = host.send("POST", f"/api/{_PREFIX}_{command}", body)
    spool = _Spool()
    try:
        # A quick command is over before the first look: its output is copied from the
        # spool once, at the end, and the host is asked nothing more meanwhile.
        while not pending.wait(FOLLOW_SECONDS):
            if spool.path is None:
                last = host.ask("POST", f"/api/{_PREFIX}_last", {"tab": tab, "tail_lines": 0})
                data = last.data
                if last.status == 200 and isinstance(data, dict):
                    started = _run_id(str(data.get("spool", "")))
                    if started is not None and started > before:
                        spool.path = str(data["spool"])
            spool.pump()
        answer = pending.answer()
    finally:
        pending.close()
    if answer.status == 200 and isinstance(answer.data, dict):
        spool.path = str(answer.data.get("spool", spool.path))
        spool.pump()
    return answer, True


def _serve(call: VerbCall) -> int | None:
    root = _root(call)
    host = _host(root)
    if host is None:
        if call.command in ("run", "rerun", "close"):
            from . import quiet_run  # nothing else to do: in this process

            quiet = {"run": quiet_run.quiet_run, "rerun": quiet_run.quiet_rerun}
            return quiet.get(call.command, quiet_run.quiet_close)(call, root)
        if call.command == "project":
            from .project_quiet import quiet_project  # the scene: git and the record

            return quiet_project(call)
        if call.command == "trust":
            from .project_quiet import quiet_trust  # trusted already: nothing to write

            return quiet_trust(call)
        from .quiet_verbs import quiet_verb  # a read with nothing to do: from state.db

        return quiet_verb(call, root)
    view = VIEWS.get(call.command)
    stream = view is not None and view.streams and not call.json
    stream = stream and not call.body.get("background")
    name = _ROUTES.get(call.command, f"{_PREFIX}_{call.command}")
    try:
        if stream:
            answer, streamed = _followed(host, call.command, call.body, _spool_dir(root))
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
        if call.json or view is None:
            emit_json_data(answer.data)  # a verb without a view of its own: its JSON
        else:
            view.show(answer.data, streamed, root)
        return 0 if view is None else view.exit_code(answer.data)
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
