"""The verify verbs: `verify_run`, `verify_status`, `verify_cancel` (DESIGN §4–5).

They are listed only while a project is open. `verify_run` returns at once with the task,
epoch and snapshot ids unless `wait=true`; then it reports progress per rung and returns
the finished epoch. `verify_status` answers "is the code as it is now green?" in one call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..limits import check_path
from ..verify import LadderRequest, Policy, RungName
from ..verify.runner.report import (
    VerifyCancelResult,
    VerifyRunResult,
    VerifyStatusResult,
    epoch_report,
)
from ..verify.runner.text import epoch_summary
from .row import Progress, Verb

if TYPE_CHECKING:
    from ..habitat import Habitat

__all__ = [
    "VERIFY_VERBS",
    "VerifyCancelArgs",
    "VerifyRunArgs",
    "VerifyStatusArgs",
    "verify_run",
]


def _listed(value: Any) -> Any:
    # A model often passes one path as a bare string; it means a list of one.
    return [value] if isinstance(value, str) else value


class VerifyRunArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: Policy | None = Field(
        default=None,
        description="minimal (diagnose.files), standard (the default: + compile.project, "
        "test.scoped), strict (+ build.affected), ci_parity (all).",
    )
    rung: list[RungName] | None = Field(
        default=None,
        description="Run exactly these rungs instead of the policy's.",
    )
    files: list[str] | None = Field(
        default=None, description="The change's files, instead of git's dirty set."
    )
    filter: list[str] | None = Field(
        default=None,
        description="pytest node ids, paths, or '-k EXPR'; replaces the affected-test selection.",
    )
    wait: bool = Field(
        default=False,
        description="Wait for the result instead of returning at once.",
    )

    _as_lists = field_validator("rung", "files", "filter", mode="before")(_listed)

    @field_validator("files")
    @classmethod
    def _paths(cls, files: list[str] | None) -> list[str] | None:
        for name in files or ():
            check_path(name)
        return files


class VerifyStatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str | None = Field(
        default=None, description="A task id from verify_run; default the newest epoch."
    )


class VerifyCancelArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str | None = Field(default=None, description="A task id from verify_run.")


async def verify_run(
    habitat: Habitat, args: VerifyRunArgs, progress: Progress | None
) -> VerifyRunResult:
    """Queue a verify of the tree as it is now (and wait for it with `wait`)."""
    runner = habitat.verifier.require()
    # A verify asked for is the user asking for the project's code to run (trust.py).
    await habitat.trust.grant(runner.root, "verify")
    request = LadderRequest(
        policy=args.policy, rungs=args.rung, files=args.files, filter=args.filter
    )

    async def per_rung(done: float, total: float | None, message: str) -> None:
        if progress is not None:
            # Half a step while a rung runs: the value increases on every rung start and end.
            running = 0.5 if message.endswith(" running") else 0.0
            await progress(done + running, f"{message} ({int(done)}/{int(total or 0)} rungs done)")

    ticket = await runner.request(
        request, wait=args.wait, progress=per_rung if progress is not None else None
    )
    report = epoch_report(ticket.result, runner.root) if ticket.result is not None else None
    summary = (
        epoch_summary(report)
        if report is not None
        else f"{ticket.state}: epoch {ticket.epoch} ({ticket.task}); verify_status to follow it"
    )
    return VerifyRunResult(
        task=ticket.task,
        epoch=ticket.epoch,
        snapshot=ticket.snapshot,
        state=report.state if report is not None else ticket.state,
        green=bool(report and report.green),
        summary=summary,
        coalesced=ticket.coalesced,
        superseded=ticket.superseded,
        result=report,
    )


async def _status(habitat: Habitat, args: VerifyStatusArgs) -> VerifyStatusResult:
    from ..habitat import CALLER_SESSION

    return await habitat.verifier.status(args.task, CALLER_SESSION.get())


VERIFY_VERBS = (
    Verb(
        name="run",
        group="verify",
        args=VerifyRunArgs,
        result=VerifyRunResult,
        call=lambda h, a, p: verify_run(h, a, p),
        reports_progress=True,
        cli=False,  # `habitat verify` (cli/verify_cmds.py) has its own live display
        command="verify",
        summary="verify the code as it is now, in the background",
        description=(
            "Verify the code as it is now: diagnose.files (ruff), compile.project (mypy/pyright), "
            "test.scoped (the tests the change affects), or what `policy`/`rung` pick; only "
            "findings the change introduced are red. Returns the task (verify_status follows it) "
            "unless `wait=true`: then the verdict, with findings (file:line) and failing tests' "
            "assertion lines. A newer request cancels a running climb."
        ),
    ),
    Verb(
        name="status",
        group="verify",
        args=VerifyStatusArgs,
        result=VerifyStatusResult,
        call=lambda h, a, p: _status(h, a),
        read_only=True,
        cli=False,  # `habitat status` (cli/verify_cmds.py) answers from the record
        summary="is the code as it is now green?",
        description=(
            "Is the code as it is now green? The newest (or `task`'s) epoch with its rungs and "
            "snapshot; `stale` with the changed paths when files changed since (never green "
            "then); the time accounting."
        ),
    ),
    Verb(
        name="cancel",
        group="verify",
        args=VerifyCancelArgs,
        result=VerifyCancelResult,
        call=lambda h, a, p: h.verifier.cancel(a.task),
        destructive=True,
        cli=False,  # `habitat cancel` (cli/verify_cmds.py)
        summary="cancel the running verify",
        description=(
            "Cancel a verify run (default the running one, else the queued one): its processes "
            "are killed within 2 s; finished rungs keep their results."
        ),
    ),
)
