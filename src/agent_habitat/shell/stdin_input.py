"""`input`: text written to the stdin of a tab's running interactive command (Shell.input)."""

from __future__ import annotations

import anyio.to_thread

from ..errors import UsageError
from ..secrets import shown_command
from .models import InputArgs, InputResult
from .supervisor import RunSupervisor

__all__ = ["send_input"]

_STARTING_BOUND = 30.0
"""How long `input` waits for a run whose row exists but whose process is still starting
here (a bound for a hung start, not a pace: a start takes milliseconds)."""


async def send_input(runs: RunSupervisor, args: InputArgs) -> InputResult:
    """Write `args.text` to the running command of `args.tab` (a tab that exists)."""
    run = runs.running(args.tab)
    if run is None:
        raise UsageError(f"tab {args.tab!r} has no running command to send input to")
    if not run.interactive:
        raise UsageError(
            f"#{run.idx} `{shown_command(run.command)}` was not started interactive "
            "(stdin is /dev/null); start it with interactive=true to send input"
        )
    process = await runs.live_once_started(run.id, _STARTING_BOUND)
    stdin = process.stdin if process else None
    if stdin is None or stdin.closed:
        raise UsageError(f"stdin of #{run.idx} is closed or belonged to an earlier habitat process")
    data = args.text.encode()

    def send() -> None:
        stdin.write(data)
        stdin.flush()
        if args.eof:
            stdin.close()

    try:
        # A full pipe blocks until the command reads; that must not stall the event loop.
        await anyio.to_thread.run_sync(send)
    except BrokenPipeError as exc:
        raise UsageError(f"#{run.idx} closed its stdin") from exc
    return InputResult(tab=args.tab, index=run.idx, bytes_written=len(data), eof=args.eof)
