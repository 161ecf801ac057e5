"""`habitat verify` in this process: open the workspace's state, climb the ladder in the
foreground with a live view of the rungs, record the epoch where `habitat status` (and the
MCP servers' status) find it, and print the verdict. The path of `--no-host`, the
`ci_parity` policy (a fresh climb, as CI's), and of a script when no host runs."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable

import anyio.to_thread

from ..habitat import VerifyRecord
from ..verify import POLICIES, RUNGS, LadderRequest, LadderResult, load_policy, run_ladder
from ..verify.rungs import mypy_early
from ..verify.rungs.warm_pytest import drop_early
from ..verify.timing import timing_of
from ..workspace import Workspace
from .common import build_args, on_project, project_root, run_command
from .verdict_text import render_verdict
from .verify_exit import EXIT_CODES

__all__ = ["verify_here"]


def verify_here(args: argparse.Namespace, requested: float) -> int:
    """Climb here; `requested` is the monotonic time the person asked (the wall starts):
    this process's start, so the interpreter and the imports are in the wall, as `start`."""

    async def body() -> int:
        try:
            return await climb()
        finally:
            await drop_early()  # a warm pytest begun early that the climb did not take over
            await mypy_early.drop()  # and a type check

    async def climb() -> int:
        root = project_root(args)
        request = build_args(
            LadderRequest,
            policy=args.policy,
            rungs=args.rung,
            files=args.files,
            filter=args.filter,
        )
        # Its own state, bus, project and record of verify, without the shell: a verify
        # starts no tab or run (`open_habitat` builds the shell too).
        opened = VerifyRecord.open(
            Workspace.for_project(root), project=root if args.project is not None else None
        )
        async with opened as habitat:
            await on_project(habitat, root)
            # The user asked for a verify: that is trusting the project's code to run.
            await habitat.trust.grant(root, "verify")
            bus = habitat.bus
            # The early type check's preparation, begun beside this process's start: its
            # probe of the interpreter is the climb's (not a second one beside it).
            await anyio.to_thread.run_sync(mypy_early.settle)
            queued_at = time.time()
            climbing = time.monotonic()
            after: list[Callable[[], Awaitable[None]]] = []
            if args.json:
                result = await run_ladder(root, request, bus=bus, keeps_warm=False, after=after)
            else:
                # Only the live view draws with rich: a `--json` verify (a script's) skips
                # importing it.
                from rich.console import Console

                from .ladder_view import LadderView

                policy_rungs = request.rungs or list(POLICIES[request.policy or load_policy(root)])
                rungs = [r for r in RUNGS if r in policy_rungs]
                with LadderView(Console(file=sys.stderr), rungs, bus):
                    result = await run_ladder(root, request, bus=bus, keeps_warm=False, after=after)
            result = _timed(result, requested, climbing)
            report = await habitat.verifier.record_foreground(request, result, queued_at)
            # Its reason as the record words it (a red change undone: `record.red_gone`).
            result = result.model_copy(update={"reason": report.reason})
            # The verdict out as soon as it is known; what it need not wait for (stopping the
            # warm pytest this climb started) after it, before the exit that carries its code.
            try:
                _print(result, args.json)
            finally:
                for step in after:
                    await step()
        return EXIT_CODES[result.state]

    code = run_command(body, term_as_interrupt=True)
    from . import end_without_teardown

    end_without_teardown()
    return code


def _print(result: LadderResult, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        render_verdict(result.model_dump(mode="json"), sys.stdout, colour=sys.stdout.isatty())
    sys.stdout.flush()


def _timed(result: LadderResult, requested: float, climbing: float) -> LadderResult:
    # Before the climb: this process's start (interpreter, imports, the state opened); in
    # the climb, outside the rungs: the snapshot, the environment probe, the selection.
    timing = timing_of(
        time.monotonic() - requested,
        (r.climb_s for r in result.rungs),
        start_s=climbing - requested,
    )
    return result.model_copy(update={"timing": timing})
