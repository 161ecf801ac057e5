"""`habitat verify`: climb the verification ladder in the foreground.

Exit codes (`EXIT_CODES`): 0 green (at least one rung ran, all that ran are green, no tool
missing); 1 red, error, died or cancelled (and a git that refuses to work); 2 usage or
configuration errors; 3 incomplete (a rung could not run, or none could: the reason says
what to install or configure); 4 nothing to verify (the tree is unchanged since HEAD, or
the change gives no rung work); 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from ..verify import POLICIES, RUNGS, LadderRequest, LadderState, load_policy, run_ladder
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
        help="wait for the result (the only mode until the background runner lands)",
    )
    add_common(parser)
    parser.set_defaults(handler=_verify)


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
        async with open_habitat(args) as habitat:
            bus = habitat.bus
            if args.json:
                result = await run_ladder(root, request, bus=bus)
                emit_json(result)
                return EXIT_CODES[result.state]
            console = Console(highlight=False)
            policy_rungs = request.rungs or list(POLICIES[request.policy or load_policy(root)])
            rungs = [r for r in RUNGS if r in policy_rungs]
            with LadderView(Console(file=sys.stderr), rungs, bus):
                result = await run_ladder(root, request, bus=bus)
        render_result(console, result)
        return EXIT_CODES[result.state]

    return run_command(body)
