"""What the verify runner plugs into a climb. A foreground `habitat verify` passes none.

Kept to plain callables so the ladder and the rungs know nothing of the runner: the runner
names the climb, hands it the snapshot its epoch is bound to, hears of every process and
every finished rung as it happens (a cancelled climb returns no result), and lends each
test rung a fresh substrate.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from ..proc import ProcessRecord
from .models import LadderRequest, LadderResult, RungResult
from .select.memo import SelectionMemo
from .snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ..events import EventBus
    from ..workspace import Workspace

__all__ = ["LadderFn", "LadderHooks", "SubstrateLease", "WarmSteps"]


class SubstrateLease(Protocol):
    """A substrate lent to one test task (see `verify.substrate`)."""

    env: dict[str, str]

    def current_test(self) -> str | None:
        """The test that was running last (written by the substrate's pytest plugin)."""
        ...

    def mark_failed(self) -> None:
        """The task did not pass: keep the folder when `keep_failed` is set."""
        ...


class WarmSteps(Protocol):
    """The open project's warm-up as a climb sees it (runner/warmup.py's `WarmUp`)."""

    async def climbable(self) -> None:
        """Returns once a climb may begin (the warm-up has started its steps, or ended)."""
        ...

    def ended(self, step: str) -> bool:
        """The warm-up's `step` has ended (however it ended)."""
        ...

    def running(self, step: str) -> bool:
        """The warm-up's `step` is under way: begun, not ended."""
        ...

    async def ready(self, step: str) -> None:
        """Returns once the warm-up's `step` ended, however it ended: a rung waits only for
        the step it uses (`compile.project` for `type_daemon`), never for the others."""
        ...


@dataclass
class LadderHooks:
    ladder_id: str | None = None
    """Use this climb id (the runner's task id) instead of a fresh one."""
    snapshot: Snapshot | None = None
    """Verify this snapshot (taken by the runner when the epoch began)."""
    rung_finished: Callable[[RungResult], None] | None = None
    """Called with every rung's result before its end event, cancelled ones included."""
    process_started: Callable[[str, ProcessRecord], None] | None = None
    """(task id, record) of every process a rung starts."""
    substrate: Callable[[str], AbstractAsyncContextManager[SubstrateLease]] | None = None
    """A fresh substrate per test task id (`test.scoped`, `test.full`)."""
    memo: SelectionMemo | None = None
    """The runner's import graph and dependency data, kept between climbs."""
    warm: WarmSteps | None = None
    """The open project's warm-up, whose steps a rung may wait for."""
    after: list[Callable[[], Awaitable[None]]] | None = None
    """Where the climb puts the clean-up its verdict need not wait for (the processes of
    the rungs it stopped as it ended red, verify/stopping.py): the runner awaits each once
    it published the verdict, before the next climb."""


class LadderFn(Protocol):
    """The climb the runner calls (`verify.ladder.run_ladder`; tests give a fake)."""

    async def __call__(
        self,
        root: Path,
        request: LadderRequest | None = None,
        *,
        bus: EventBus,
        workspace: Workspace | None = None,
        hooks: LadderHooks | None = None,
    ) -> LadderResult: ...
