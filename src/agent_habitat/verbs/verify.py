"""The verify verbs: `verify_run`, `verify_status`, `verify_cancel` (DESIGN §4–5); their
arguments live in verify/runner/args.py and the slot (verify/runner/slot.py) answers them.

They are listed only while a project is open. `verify_run` returns at once with the task,
epoch and snapshot ids unless `wait=true`; then it reports progress per rung and returns
the finished epoch. `verify_status` answers "is the code as it is now green?" in one call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..verify.runner.args import VerifyCancelArgs, VerifyRunArgs, VerifyStatusArgs
from ..verify.runner.report import VerifyCancelResult, VerifyRunResult, VerifyStatusResult
from .row import Verb

if TYPE_CHECKING:
    from ..habitat import Habitat

__all__ = ["VERIFY_VERBS"]


async def _status(habitat: Habitat, args: VerifyStatusArgs) -> VerifyStatusResult:
    from ..habitat import CALLER_SESSION

    return await habitat.verifier.status(args.task, CALLER_SESSION.get())


VERIFY_VERBS = (
    Verb(
        name="run",
        group="verify",
        args=VerifyRunArgs,
        result=VerifyRunResult,
        call=lambda h, a, p: h.verifier.run(a, p),
        reports_progress=True,
        cli=False,  # `habitat verify` (cli/verify_cmds.py) has its own live display
        command="verify",
        summary="verify the code as it is now, in the background",
        description=(
            "Verify the code as it is now: diagnose.files (ruff), compile.project (mypy/pyright), "
            "test.scoped (tests the change affects), or what `policy`/`rung` pick; only findings "
            "the change introduced are red. Returns the task, or with `wait=true` the verdict "
            "(findings at file:line, failing tests' assertion lines). A newer request cancels a "
            "running climb."
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
            "Is the code as it is now green? The newest (or `task`'s) epoch, its rungs and "
            "snapshot; `stale` and the changed paths when files changed since (never green "
            "then); time accounting."
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
