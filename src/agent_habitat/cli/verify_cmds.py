"""`habitat verify`: climb the verification ladder in the foreground; `habitat status` and
`habitat cancel`: the workspace's verify as recorded, and cancelling it.

When a host serves the workspace (`habitat host start`, or the bridge of `habitat mcp`), the
three commands go to its runner over its JSON API: `verify` hands the request over and
returns at once with the task (`--wait` blocks until the epoch ends), `cancel` reaches the
running chain, `status` is the runner's own answer. With no host, `verify` climbs in the
foreground and records the epoch in the workspace's state, where `habitat status` (and the
MCP servers' status) find it; `status` then says which process serves the runner, or that
none does.

Exit codes (`EXIT_CODES`): 0 green (at least one rung ran, all that ran are green, no tool
missing); 1 red, error, died or cancelled (and a git that refuses to work); 2 usage or
configuration errors; 3 incomplete (a rung could not run, or none could: the reason says
what to install or configure); 4 nothing to verify (the tree is unchanged since HEAD, or
the change gives no rung work); 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from ..habitat import Habitat
from ..host.client import HostClient
from ..host.launcher import find_host
from ..verbs import verb
from ..verbs.verify import VerifyCancelArgs, VerifyRunArgs, VerifyStatusArgs
from ..verify import POLICIES, RUNGS, LadderRequest, LadderState, load_policy, run_ladder
from ..verify.rungs.dmypy import describe_warm
from ..verify.rungs.warm_pytest import WarmPytest
from ..verify_report import VerifyCancelResult, VerifyRunResult, VerifyStatusResult
from ..verify_text import render_verify_cancel, render_verify_run, render_verify_status
from ..workspace import Workspace
from .common import add_common, build_args, emit_json, open_habitat, project_root, run_command
from .ladder_view import LadderView, render_result

__all__ = ["EXIT_CODES", "register"]

EXIT_CODES: dict[LadderState, int] = {
    "green": 0,
    "red": 1,
    "error": 1,
    "died": 1,
    "cancelled": 1,
    "incomplete": 3,
    "nothing_to_verify": 4,
}
# A handed-over epoch can also end `stale` (the tree moved meanwhile) or `lost`: not green.
_HOSTED_EXIT: dict[str, int] = {str(k): v for k, v in EXIT_CODES.items()} | {"stale": 1, "lost": 1}
_EPILOG = (
    "exit codes: 0 green (something ran and passed); 1 red, error, died or cancelled; "
    "2 usage or configuration error; 3 incomplete (a rung could not run — the reason says "
    "what to install or configure); 4 nothing to verify (unchanged since HEAD, or the change "
    "gives no rung work); 130 interrupted"
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="climb the verification ladder on the code as it is now",
        description=(
            "Run the ladder's rungs (diagnose.files → compile.project → build.affected → "
            "test.scoped → test.full, as the policy says) on the project's current state and "
            "stop at the first red one. Only findings the change introduced (not at HEAD "
            "too) make a rung red. Exit 0 only when green."
        ),
        epilog=_EPILOG,
    )
    parser.add_argument("--policy", choices=list(POLICIES), help="default: [tool.habitat] policy")
    parser.add_argument(
        "--rung",
        action="append",
        choices=list(RUNGS),
        metavar="RUNG",
        help=f"run exactly this rung (repeatable) instead of the policy's: {', '.join(RUNGS)}",
    )
    parser.add_argument(
        "--files", nargs="+", metavar="FILE", help="treat these files as the change"
    )
    parser.add_argument(
        "--filter",
        action="append",
        metavar="ARG",
        help="pytest node id, path, or '-k EXPR' (repeatable); replaces the test selection",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="with a host serving the workspace: wait for the epoch to end instead of returning "
        "with its task id (without a host the ladder always climbs in the foreground)",
    )
    add_common(parser)
    parser.set_defaults(handler=_verify)
    status = subparsers.add_parser(
        "status",
        help="is the code green now? the workspace's latest verify epoch and who serves it",
        description=(
            "The latest verify epoch of the project as recorded in the workspace's state, "
            "compared with the tree as it is now (stale when files changed since), which process "
            "serves the verify runner (or that none does), and its time accounting. "
            "Exit 0 green, 1 not green."
        ),
    )
    status.add_argument("--task", help="a verify task id; default the newest epoch")
    add_common(status)
    status.set_defaults(handler=_status)
    cancel = subparsers.add_parser(
        "cancel",
        help="cancel the running verify",
        description=(
            "Cancel the verify run of this workspace: through the workspace host when one "
            "serves it; a run served by an embedded `habitat mcp --embedded` cannot be reached "
            "from here, and this says where to cancel it."
        ),
    )
    cancel.add_argument("--task", help="the task to cancel; default the running run")
    add_common(cancel)
    cancel.set_defaults(handler=_cancel)


async def _on_project(habitat: Habitat, root: Path) -> None:
    # Outside a git work tree nothing opens a project at start; the CLI's folder is it.
    if habitat.project.root is None:
        await habitat.project.open(root, source="cwd")


async def _through_host(args: argparse.Namespace, name: str, request: Any) -> Any | None:
    """The verify verb's answer from the workspace host, or None when no host serves it."""
    record = find_host(project_root(args))
    if record is None:
        return None
    async with HostClient(record) as host:
        return await host.call(verb(name, "verify"), request)


def _status(args: argparse.Namespace) -> int:
    async def body() -> int:
        hosted = await _through_host(args, "status", VerifyStatusArgs(task=args.task))
        if isinstance(hosted, VerifyStatusResult):
            result = hosted
        else:
            result = await _recorded_status(args)
        from ..verify.warmup import warm_lines  # what the serving process warmed

        warm = warm_lines(Workspace.for_project(project_root(args)))
        if args.json and warm:
            data = result.model_dump(mode="json") | {"warm": warm}
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        elif args.json:
            emit_json(result)
        else:
            sys.stdout.write(render_verify_status(result) + "".join(f"{w}\n" for w in warm))
            workspace = Workspace.for_project(project_root(args))
            sys.stdout.write(describe_warm(workspace) + (WarmPytest(workspace).describe() or ""))
        return 0 if result.green else 1

    return run_command(body, term_as_interrupt=True)


async def _recorded_status(args: argparse.Namespace) -> VerifyStatusResult:
    async with open_habitat(args) as habitat:
        await _on_project(habitat, project_root(args))
        return await habitat.verifier.status(args.task)


def _cancel(args: argparse.Namespace) -> int:
    async def body() -> int:
        hosted = await _through_host(args, "cancel", VerifyCancelArgs(task=args.task))
        if isinstance(hosted, VerifyCancelResult):
            result = hosted
        else:
            async with open_habitat(args) as habitat:
                await _on_project(habitat, project_root(args))
                result = await habitat.verifier.cancel(args.task)
        if args.json:
            emit_json(result)
        else:
            sys.stdout.write(render_verify_cancel(result))
        return 0

    return run_command(body, term_as_interrupt=True)


def _verify(args: argparse.Namespace) -> int:
    async def body() -> int:
        root = project_root(args)
        request = build_args(
            LadderRequest,
            policy=args.policy,
            rungs=args.rung,
            files=args.files,
            filter=args.filter,
        )
        handed = VerifyRunArgs(
            policy=request.policy,
            rung=request.rungs,
            files=request.files,
            filter=request.filter,
            wait=args.wait,
        )
        hosted = await _through_host(args, "run", handed)
        if isinstance(hosted, VerifyRunResult):
            if args.json:
                emit_json(hosted)
            else:
                sys.stdout.write(render_verify_run(hosted))
            if not args.wait:
                return 0  # handed to the host's runner: `habitat status` tells how it ends
            return _HOSTED_EXIT.get(hosted.state, 1)
        async with open_habitat(args) as habitat:
            await _on_project(habitat, root)
            bus = habitat.bus
            queued_at = time.time()
            if args.json:
                result = await run_ladder(root, request, bus=bus)
                await habitat.verifier.record_foreground(request, result, queued_at)
                emit_json(result)
                return EXIT_CODES[result.state]
            console = Console(highlight=False)
            policy_rungs = request.rungs or list(POLICIES[request.policy or load_policy(root)])
            rungs = [r for r in RUNGS if r in policy_rungs]
            with LadderView(Console(file=sys.stderr), rungs, bus):
                result = await run_ladder(root, request, bus=bus)
            await habitat.verifier.record_foreground(request, result, queued_at)
        render_result(console, result)
        return EXIT_CODES[result.state]

    return run_command(body, term_as_interrupt=True)
