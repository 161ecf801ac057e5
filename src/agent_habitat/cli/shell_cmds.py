"""`habitat run|rerun|scene|history|last|which|kill|close|wait|input` — the verb table as
subcommands (`cli.flags` builds each from its row), shown by `cli.shell_views`.

When a host runs for the workspace the call goes to it: first through `cli.host_verbs`
(the standard library alone, before this module is imported), and here, over `reach.client`,
for what that path leaves to the full one (an interactive run, input the host refused).
A person and the agent see the same tabs, and `input` reaches a run the agent started.
Otherwise the verb runs embedded, on the workspace state. Output and exit codes are the
same either way (the views take the result as JSON data on both paths); a foreground run
streams its spool file live on both paths.

`--json` prints the result model; the exit code is the command's for runs (124 on timeout),
1 when a wait did not see its match or the exit, or a kill left processes alive.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from pydantic import BaseModel

from ..shell import models as m
from ..verbs import SHELL_VERBS, AnyVerb
from .attach import Caller, Streamer, follow_run, stream_spool, terminal_env, verb_row
from .common import JSON_ERRORS, open_habitat, project_root, run_command, running_host
from .flags import add_verb_parser, request_from
from .parser import input_refused
from .shell_views import VIEWS, emit_json_data
from .styles import dim

if TYPE_CHECKING:
    from ..reach.lock import HostRecord
    from ..shell.quiet_run import Handed
    from .verb_argv import VerbCall

__all__ = ["handed_run", "register"]


_PROJECT_COMMANDS = frozenset({"project", "trust"})
"""The project verbs' commands: their rows (and the project scene's models) load for them."""


def register(subparsers: Any, only: str | None = None) -> None:
    """The shell and project rows' subcommands, or `only` that command's: the verify rows'
    models are not needed to serve a shell command (the verify commands are
    `cli.verify_cmds`), nor the project verbs' to serve `habitat run`."""
    rows: tuple[AnyVerb, ...] = SHELL_VERBS
    if only is None or only in _PROJECT_COMMANDS:
        from ..verbs.project import PROJECT_VERBS

        rows = (*rows, *PROJECT_VERBS)
    for verb in rows:
        if verb.cli and only in (None, verb.cli_name):
            add_verb_parser(subparsers, verb).set_defaults(handler=_handler(verb))


async def _embedded(
    args: argparse.Namespace, serve: Callable[[Caller], Awaitable[BaseModel]]
) -> BaseModel:
    """The verb in this process, on the workspace state (no host runs)."""
    async with open_habitat(args) as habitat:

        async def call(verb: AnyVerb, request: BaseModel) -> BaseModel:
            return await verb.call(habitat, request, None)

        return await serve(call)


async def _via_host(
    record: HostRecord, serve: Callable[[Caller], Awaitable[BaseModel]]
) -> BaseModel:
    """The verb in the workspace host, over its JSON API: its tabs, its stdin pipes."""
    from ..reach.client import HostClient

    async with HostClient(record) as host:
        return await serve(host.call)


async def _host_for_stdin(root: Path, record: HostRecord | None) -> HostRecord:
    """A background interactive run needs a process that outlives this one to hold its stdin
    open for `input`: the workspace host, started here when none runs."""
    if record is not None:
        return record
    from ..reach.launcher import ensure_host

    handle = await anyio.to_thread.run_sync(ensure_host, root)
    if handle.started:
        dim(
            f"started the workspace host (pid {handle.record.pid}) to hold the run's stdin "
            "open for `habitat input`; `habitat host stop` ends it",
            sys.stderr,
        )
    return handle.record


def _handler(verb: AnyVerb) -> Callable[[argparse.Namespace], int]:
    view = VIEWS.get(verb.cli_name)
    streams = view is not None and view.streams

    def handler(args: argparse.Namespace) -> int:
        async def body() -> int:
            request = request_from(verb, args)
            background = bool(getattr(request, "background", False))
            interactive = bool(getattr(request, "interactive", False))
            root = project_root(args)
            record = running_host(root)
            if interactive and background:
                record = await _host_for_stdin(root, record)
            elif interactive and isinstance(request, m.RunArgs):
                request = terminal_env(request)
            streamer = None
            if streams and not args.json and not background:
                streamer = Streamer(getattr(request, "tab", "main"))

            async def serve(call: Caller) -> BaseModel:
                if streamer is None and not (interactive and not background):
                    return await call(verb, request)
                return await follow_run(
                    call,
                    verb,
                    request,
                    tab=getattr(request, "tab", "main"),
                    streamer=streamer,
                    interactive=interactive,
                )

            if record is None:
                result = await _embedded(args, serve)
            else:
                result = await _via_host(record, serve)
            return _show(verb, result, args, streamer is not None)

        return run_command(body)

    return handler


def _show(verb: AnyVerb, result: BaseModel, args: argparse.Namespace, streamed: bool) -> int:
    """Print the result as the host path prints it (`cli.shell_views`, on the same JSON
    data) and return the exit code."""
    if verb.cli_name in _PROJECT_COMMANDS and not args.json:
        from ..project_scene import ProjectSceneResult, render_project_scene

        if isinstance(result, ProjectSceneResult):
            sys.stdout.write(render_project_scene(result))
            return 0
    data = result.model_dump(mode="json")
    if args.json:
        emit_json_data(data)
    view = VIEWS.get(verb.cli_name)
    if view is None:
        if not args.json:
            emit_json_data(data)  # a result without a view of its own: its JSON
        return 0
    if not args.json:
        view.show(data, streamed, project_root(args))
    return view.exit_code(data)


_INTERRUPTED = 130
"""The exit code of a command Ctrl-C stopped (`common.run_command`'s)."""


def handed_run(call: VerbCall, handed: Handed) -> int:
    """`habitat run` for a run `cli.quiet_run` started in this process and hands over (it
    went on past its first moment, or ended in a way only this path records): followed from
    there by the shell (`Shell.follow_handed`), its output streamed, its result shown, as
    for a run started here."""
    args = argparse.Namespace(
        project=Path(call.project) if call.project is not None else None, json=call.json
    )
    JSON_ERRORS.set(call.json)
    verb = verb_row("run")

    async def body() -> int:
        request = m.RunArgs.model_validate(call.body)
        streamer = None if call.json else Streamer(request.tab)
        async with open_habitat(args, handed) as habitat:
            if handed.cancelled:  # Ctrl-C in its first moment: as on the full path's
                await habitat.shell.cancel_handed(request, handed)
                return _INTERRUPTED
            if streamer is None:
                result: BaseModel = await habitat.shell.follow_handed(request, handed)
            else:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(stream_spool, streamer, str(handed.run.files.output))
                    result = await habitat.shell.follow_handed(request, handed)
                    tg.cancel_scope.cancel()
                streamer.finish(result)
        return _show(verb, result, args, streamer is not None)

    code = run_command(body)
    if not input_refused():
        from .host_start import start_behind

        start_behind(args)
    return code
