"""`habitat status` and `habitat cancel`: through the workspace host's runner when one
serves the workspace, else from the workspace's record (which a one-shot verify writes),
opened as a one-shot verify opens it (`habitat.VerifyRecord`: the state, bus, project and
record, without the shell, whose models and open were a third of the command's CPU)."""

from __future__ import annotations

import argparse
import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..habitat import VerifyRecord
from ..verify.runner.args import VerifyCancelArgs, VerifyStatusArgs
from ..verify.runner.cli_text import cancel_output, status_output
from ..verify.runner.report import VerifyCancelResult, VerifyStatusResult
from ..workspace import Workspace
from .common import on_project, project_root, run_command, running_host

__all__ = ["cancel", "status"]


async def _through_host(args: argparse.Namespace, name: str, request: Any) -> Any | None:
    """The verify verb's answer from the workspace host, or None when no host serves it."""
    record = running_host(project_root(args))
    if record is None:
        return None
    # Here, not with the module: the client (httpx) and the whole verb table (the shell's
    # models too) are a third of what `habitat status` costs with no host to ask.
    from ..reach.client import HostClient
    from ..verbs import verb

    async with HostClient(record) as host:
        return await host.call(verb(name, "verify"), request)


def status(args: argparse.Namespace) -> int:
    async def body() -> int:
        hosted = await _through_host(args, "status", VerifyStatusArgs(task=args.task))
        if isinstance(hosted, VerifyStatusResult):
            result = hosted
        else:
            result = await _recorded_status(args)
        workspace = Workspace.for_project(project_root(args))
        text, code = status_output(result, workspace, as_json=args.json)
        sys.stdout.write(text)
        return code

    return run_command(body, term_as_interrupt=True)


def _open_record(args: argparse.Namespace) -> AbstractAsyncContextManager[VerifyRecord]:
    """The workspace's record of verify, for the project the CLI is pointed at."""
    root = project_root(args)
    return VerifyRecord.open(
        Workspace.for_project(root), project=root if args.project is not None else None
    )


async def _recorded_status(args: argparse.Namespace) -> VerifyStatusResult:
    async with _open_record(args) as habitat:
        await on_project(habitat, project_root(args))
        return await habitat.verifier.status(args.task)


def cancel(args: argparse.Namespace) -> int:
    async def body() -> int:
        hosted = await _through_host(args, "cancel", VerifyCancelArgs(task=args.task))
        if isinstance(hosted, VerifyCancelResult):
            result = hosted
        else:
            async with _open_record(args) as habitat:
                await on_project(habitat, project_root(args))
                result = await habitat.verifier.cancel(args.task)
        text, code = cancel_output(result, as_json=args.json)
        sys.stdout.write(text)
        return code

    return run_command(body, term_as_interrupt=True)
