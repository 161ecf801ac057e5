"""`habitat verify`: climb the verification ladder in the foreground.

Exit 0 only when the climb is green (every rung that ran is green and none was skipped
for a missing tool); 1 otherwise; 2 for usage or configuration errors; 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from ..verify import POLICIES, RUNGS, LadderRequest, load_policy, run_ladder
from .common import add_common, build_args, emit_json, journaled_bus, project_root, run_command
from .ladder_view import LadderView, render_result

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="climb the verification ladder on the code as it is now",
        description=(
            "Run the ladder's rungs (diagnose.files → compile.project → build.affected → "
            "test.scoped → test.full, as the policy says) on the project's current state and "
            "stop at the first red one. Exit 0 only when green."
        ),
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
        with journaled_bus(root) as bus:
            if args.json:
                result = await run_ladder(root, request, bus=bus)
                emit_json(result)
                return 0 if result.ok else 1
            console = Console(highlight=False)
            policy_rungs = request.rungs or list(POLICIES[request.policy or load_policy(root)])
            rungs = [r for r in RUNGS if r in policy_rungs]
            with LadderView(Console(file=sys.stderr), rungs, bus):
                result = await run_ladder(root, request, bus=bus)
        render_result(console, result)
        return 0 if result.ok else 1

    return run_command(body)
