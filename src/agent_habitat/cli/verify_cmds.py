"""`habitat verify`: climb the verification ladder and wait for the verdict; `habitat status`
and `habitat cancel`: the workspace's verify as recorded, and cancelling it.

`habitat verify` blocks until the verdict, with or without a host, and exits with it
(`verify_exit.EXIT_CODES`: 0 green, 1 red / error / died / cancelled / stale, 2 usage or
configuration, 3 incomplete, 4 nothing to verify, 5 queued, 130 interrupted). Where it
climbs:

* through the workspace host (`verify_hosted`, standard library only) when one runs, and in
  a terminal also when none does — it starts one, as `habitat mcp`'s bridge does — so the
  second verify is as warm as the agent's; `--background` hands the request to the host
  (starting one if needed) and exits 5 at once;
* here (`verify_oneshot`) with `--no-host`, with the `ci_parity` policy (a fresh climb, as
  CI's), and for a script (no terminal) when no host runs.

`--json` prints the climb's result (`LadderResult`) either way. This module imports only
the standard library: the parser and the choice of path cost a person nothing. With a host
running, the common command lines never come here: `cli.verify_fast` reads them without
argparse and hands them to the host (the same request, the same output).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from .common import add_common
from .host_start import in_a_terminal
from .verb_argv import VERIFY_ARGUMENTS, add_arguments
from .verify_fast import files_for_host, policy_of

__all__ = ["register"]

_EPILOG = (
    "exit codes: 0 green (something ran and passed); 1 red, error, died, cancelled, or stale "
    "(files changed while it climbed); 2 usage or configuration error; 3 incomplete (a rung "
    "could not run — the reason says what to install or configure); 4 nothing to verify "
    "(unchanged since HEAD, or the change gives no rung work); 5 queued (--background: no "
    "verdict yet); 130 interrupted"
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="climb the verification ladder on the code as it is now",
        description=(
            "Run the ladder's rungs (diagnose.files → compile.project → build.affected → "
            "test.scoped → test.full, as the policy says) on the project's current state, stop "
            "at the first red one, and exit with the verdict. Only findings the change "
            "introduced (not at HEAD too) make a rung red. Exit 0 only when green. It runs "
            "through the workspace host (started in a terminal when none runs) so that its "
            "checkers stay warm; --no-host or the ci_parity policy climb in this process."
        ),
        epilog=_EPILOG,
    )
    # verify_run's fields, as every verb's flags are derived from its args model.
    add_arguments(parser, VERIFY_ARGUMENTS)
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--background",
        action="store_true",
        help="hand the verify to the workspace host (starting one if none runs) and exit 5 at "
        "once, with its task: no verdict yet (`habitat status` follows it)",
    )
    where.add_argument(
        "--no-host",
        action="store_true",
        help="climb in this process, even when a host serves the workspace (cold checkers)",
    )
    parser.add_argument(
        "--wait", action="store_true", help=argparse.SUPPRESS
    )  # the default now; kept so that scripts written for it still run
    add_common(parser)
    parser.set_defaults(handler=_verify)
    for name, summary, description, task, handler in (
        (
            "status",
            "is the code green now? the workspace's latest verify epoch and who serves it",
            "The latest verify epoch of the project as recorded in the workspace's state, "
            "compared with the tree as it is now (stale when files changed since), which "
            "process serves the verify runner (or that none does), and its time accounting. "
            "Exit 0 green, 1 not green.",
            "a verify task id; default the newest epoch",
            _status,
        ),
        (
            "cancel",
            "cancel the running verify",
            "Cancel the verify run of this workspace: through the workspace host when one "
            "serves it; a run served by an embedded `habitat mcp --embedded` cannot be reached "
            "from here, and this says where to cancel it.",
            "the task to cancel; default the running run",
            _cancel,
        ),
    ):
        sub = subparsers.add_parser(name, help=summary, description=description)
        sub.add_argument("--task", help=task)
        add_common(sub)
        sub.set_defaults(handler=handler)


def _root(args: argparse.Namespace) -> Path | None:
    """The project folder, or None for a bad `--project` (the full path names the flag)."""
    project: Path | None = args.project
    from ..errors import UsageError
    from ..project_folder import a_project
    from ..workspace import find_project_root

    if project is not None:
        try:
            return a_project(project, named="--project")
        except UsageError:
            return None

    return find_project_root()


def _process_age() -> float:
    """Seconds since this process started (Linux: its start in `/proc/self/stat`, in clock
    ticks since boot), so a climb here counts the interpreter's start and the imports in
    what the person waited; 0 where that is not known."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of the whole line
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _verify(args: argparse.Namespace) -> int:
    from . import as_program

    # A process started for this command: its start is part of what the person waits for.
    requested = time.monotonic() - (_process_age() if as_program() else 0.0)
    root = _root(args)
    if (
        root is not None
        and not args.no_host
        and (args.background or policy_of(args.policy, str(root)) != "ci_parity")
    ):
        from .verify_hosted import verify_through_host

        body = {spec["dest"]: getattr(args, spec["dest"]) for _, spec in VERIFY_ARGUMENTS}
        body["files"] = files_for_host(str(root), args.files)
        code = verify_through_host(
            str(root),
            {k: v for k, v in body.items() if v is not None},
            as_json=args.json,
            background=args.background,
            start=args.background or in_a_terminal(),
        )
        if code is not None:
            return code
    if args.background:
        from .parser import JSON_ERRORS

        message = "--background needs the workspace host, which could not be reached"
        if JSON_ERRORS.get():
            import json

            sys.stderr.write(json.dumps({"error": message, "field": "background"}) + "\n")
        else:
            sys.stderr.write(f"habitat: {message}\n")
        return 1
    from .common import terms_as_interrupt

    # SIGTERM is Ctrl-C from here, before the climb's own handling begins: a warm pytest
    # begun early does not outlive a verify stopped while it imports the ladder.
    with terms_as_interrupt():
        try:
            if root is not None:
                # The test process's start first, beside this process's imports and set-up.
                from ..verify.early_pytest import begin_for_oneshot

                begin_for_oneshot(root, args.policy, args.rung)
                # The type check's too (the whole package: it needs no snapshot), its
                # settings and the interpreter's probe read in a thread beside what follows.
                from ..verify.rungs import mypy_early

                mypy_early.begin_beside(root, args.policy, args.rung)
            from .verify_oneshot import verify_here

            return verify_here(args, requested)
        except KeyboardInterrupt:
            import anyio

            from ..verify.rungs import mypy_early
            from ..verify.rungs.warm_pytest import drop_early

            anyio.run(drop_early)
            anyio.run(mypy_early.drop)
            return 130


def _status(args: argparse.Namespace) -> int:
    from .verify_records import status

    return status(args)


def _cancel(args: argparse.Namespace) -> int:
    from .verify_records import cancel

    return cancel(args)
