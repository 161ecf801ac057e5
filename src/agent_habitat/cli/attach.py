"""A foreground run seen from the CLI: its output copied to the terminal as it goes on and,
for an interactive run, the person's stdin and terminal signals forwarded to it.

The same code serves both paths (the verb in this process, or in the workspace host over its
JSON API): it only calls verbs. The run's stdin is a pipe held by whoever started the run, so
what this process reads from its own stdin goes there through `input`; end of input (a
closed pipe, Ctrl-D on a terminal) closes it. On a terminal the person's own line editing and
echo stay as they are — the run reads lines from a pipe, not keys from a terminal — and the
signals the terminal sends (Ctrl-C, Ctrl-\\) go to the run's process tree through `kill`, so
the run decides what they mean, as it would in a terminal.
"""

from __future__ import annotations

import codecs
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from anyio.lowlevel import checkpoint, checkpoint_if_cancelled
from pydantic import BaseModel

from ..errors import HabitatError, NotFoundError
from ..shell import models as m
from ..verbs import SHELL_VERBS, AnyVerb

__all__ = ["Caller", "Streamer", "follow_run", "stream_spool", "terminal_env", "verb_row"]


def verb_row(name: str) -> AnyVerb:
    """The shell verb `name` (without loading the whole table: `verbs.VERBS`)."""
    return next(row for row in SHELL_VERBS if row.name == name)


Caller = Callable[[AnyVerb, BaseModel], Awaitable[BaseModel]]
"""Calls one verb, in this process or in the host; the same answers and errors either way."""

# How often a foreground run is looked for, then its spool file read for new output.
FOLLOW_SECONDS = 0.05
_READ_BYTES = 1 << 16
# What a terminal sends when the person presses Ctrl-C, Ctrl-\ or closes the window.
_FORWARDED = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


class Streamer:
    """Copies new spool bytes to the terminal as a foreground run goes on."""

    def __init__(self, tab: str) -> None:
        self.tab = tab
        self.spool: str | None = None
        self.offset = 0

    def pump(self) -> None:
        if self.spool is None:
            return
        from ..proc.spool import Spool

        # Through `Spool`: the middle a spool keeper freed is skipped, never shown as zeros.
        spool = Spool(Path(self.spool))
        for offset, chunk in spool.chunks(self.offset, spool.size()):
            sys.stdout.buffer.write(chunk)
            self.offset = offset + len(chunk)
        sys.stdout.buffer.flush()

    def finish(self, result: BaseModel) -> None:
        self.spool = getattr(result, "spool", self.spool)
        self.pump()


def terminal_env(request: m.RunArgs) -> m.RunArgs:
    """An interactive run started from a terminal learns its size (`COLUMNS`, `LINES`), as a
    program in that terminal would, unless the command line set them."""
    try:
        size = os.get_terminal_size(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return request
    env = {"COLUMNS": str(size.columns), "LINES": str(size.lines)} | (request.env or {})
    return request.model_copy(update={"env": env})


async def _newest(call: Caller, tab: str) -> m.LastResult | None:
    try:
        last = await call(verb_row("last"), m.LastArgs(tab=tab, tail_lines=0))
    except NotFoundError:
        return None
    assert isinstance(last, m.LastResult)
    return last


async def _find_run(call: Caller, tab: str, before: int | None) -> m.LastResult:
    """The run the pending call started: the tab's newest, newer than `before`."""
    while True:
        last = await _newest(call, tab)
        if last is not None and (before is None or last.index > before):
            return last
        await anyio.sleep(FOLLOW_SECONDS)


async def stream_spool(streamer: Streamer, spool: str) -> None:
    """Copy the spool `spool` to the terminal as it grows, until cancelled."""
    streamer.spool = spool
    while True:
        streamer.pump()
        await anyio.sleep(FOLLOW_SECONDS)


async def _read_stdin(fd: int) -> bytes:
    try:
        await anyio.wait_readable(fd)
    except OSError:
        pass  # a regular file or /dev/null cannot be polled; reading it never blocks
    return os.read(fd, _READ_BYTES)


async def _send(call: Caller, tab: str, text: str, eof: bool) -> bool:
    """Write to the run's stdin; False once the run no longer takes input (it ended)."""
    try:
        await call(verb_row("input"), m.InputArgs(tab=tab, text=text, eof=eof))
    except HabitatError:
        return False
    return True


async def _forward_stdin(call: Caller, tab: str) -> None:
    stdin = sys.stdin
    fd = stdin.fileno() if stdin is not None and not stdin.closed else None
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while fd is not None:
        try:
            chunk = await _read_stdin(fd)
        except OSError:  # our stdin went away (a terminal hung up): that is end of input
            chunk = b""
        if not chunk:
            break
        text = decoder.decode(chunk)
        if text and not await _send(call, tab, text, eof=False):
            return
    await _send(call, tab, decoder.decode(b"", final=True), eof=True)


async def _forward_signals(call: Caller, tab: str) -> None:
    with anyio.open_signal_receiver(*_FORWARDED) as received:
        async for signum in received:
            name = signal.Signals(signum).name
            try:
                sent = await call(verb_row("kill"), m.KillArgs(tab=tab, signal=name))
            except HabitatError:
                return  # nothing runs there any more: the run's own end is on its way
            assert isinstance(sent, m.KillResult)
            if sent.killed and sent.remaining:
                # It handled the signal (a REPL's Ctrl-C); its end, later, is its own.
                sys.stderr.write(f"[{name} reached #{sent.index}; it goes on]\n")
                sys.stderr.flush()


# How long a call of the follower's own still in flight when the run's call ends may take
# to be answered before it is cancelled anyway: a host answers `last`, `input` and `kill` in
# milliseconds, seconds on a loaded machine; this bounds a host that stopped answering.
STOP_GRACE_SECONDS = 10.0


class _Aside:
    """The follower's own calls (`last`, `input`, `kill`) beside the run's call, never
    cancelled while on the wire unless the host keeps them past `STOP_GRACE_SECONDS`: the
    follower stops between its calls. anyio's UNIX socket stream (the host's socket) cancelled
    in the loop turn its answer arrives makes the event loop print "Exception in callback
    Future.set_result(None) ... InvalidStateError" on stderr (anyio 4.16), under the run's own
    refusal or output."""

    def __init__(self, call: Caller) -> None:
        self._call = call
        self._flying: set[anyio.CancelScope] = set()
        self._stopping = False

    async def __call__(self, verb: AnyVerb, request: BaseModel) -> BaseModel:
        await checkpoint_if_cancelled()  # stopped: not one call more
        with anyio.CancelScope(shield=True) as flying:
            if self._stopping:
                flying.deadline = anyio.current_time() + STOP_GRACE_SECONDS
            self._flying.add(flying)
            try:
                return await self._call(verb, request)
            finally:
                self._flying.discard(flying)
        # Given up after the grace: the follower's cancellation, pending since `stop`, lands.
        await checkpoint()
        raise anyio.get_cancelled_exc_class()

    def stop(self) -> None:
        """The calls in flight get their grace; the follower's cancellation reaches it once
        they are answered."""
        self._stopping = True
        deadline = anyio.current_time() + STOP_GRACE_SECONDS
        for flying in self._flying:
            flying.deadline = min(flying.deadline, deadline)


async def follow_run(
    call: Caller,
    verb: AnyVerb,
    request: BaseModel,
    *,
    tab: str,
    streamer: Streamer | None,
    interactive: bool,
) -> BaseModel:
    """`call(verb, request)` while its run's output streams and, for an interactive run, the
    person's stdin and terminal signals are forwarded to it; the call's result."""
    newest = await _newest(call, tab)
    before = newest.index if newest is not None else None
    aside = _Aside(call)

    async def attach() -> None:
        run = await _find_run(aside, tab, before)
        async with anyio.create_task_group() as inner:
            if streamer is not None:
                inner.start_soon(stream_spool, streamer, run.spool)
            if interactive and run.running:
                inner.start_soon(_forward_stdin, aside, tab)
                inner.start_soon(_forward_signals, aside, tab)

    refused: HabitatError | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(attach)
        try:
            result = await call(verb, request)
        except HabitatError as exc:
            # Raised outside the task group, as the call alone raises it: a refusal (a busy
            # tab, the tab cap) is one line and its exit code, not an exception group.
            refused = exc
        finally:  # Ctrl-C too: a call in flight gets its grace, not the shield for ever
            aside.stop()
        tg.cancel_scope.cancel()
    if refused is not None:
        raise refused
    if streamer is not None:
        streamer.finish(result)
    return result
