"""A ladder double for the runner's unit tests: it climbs the requested rungs, publishing
the same events and calling the same hooks as the real one, and holds a rung open until
the test lets it go."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import anyio
import anyio.lowlevel

from agent_habitat.events import EventBus
from agent_habitat.verify.hooks import LadderHooks
from agent_habitat.verify.models import (
    POLICIES,
    RUNGS,
    LadderRequest,
    LadderResult,
    RungName,
    RungResult,
    RungState,
)
from agent_habitat.workspace import Workspace


class FakeLadder:
    def __init__(self) -> None:
        self.calls: list[LadderRequest] = []
        self.held: set[RungName] = set()
        self.release: defaultdict[RungName, anyio.Event] = defaultdict(anyio.Event)
        self.states: dict[RungName, RungState] = {}
        self.during: dict[RungName, Path] = {}
        """Write to this file while the rung runs (a person typing mid-climb)."""

    async def __call__(
        self,
        root: Path,
        request: LadderRequest | None = None,
        *,
        bus: EventBus,
        workspace: Workspace | None = None,
        hooks: LadderHooks | None = None,
    ) -> LadderResult:
        assert request is not None
        assert hooks is not None
        assert hooks.snapshot is not None
        assert hooks.ladder_id is not None
        assert hooks.rung_finished is not None
        self.calls.append(request)
        wanted = set(request.rungs or POLICIES[request.policy or "standard"])
        results: list[RungResult] = []
        for rung in [r for r in RUNGS if r in wanted]:
            task = f"{hooks.ladder_id}.{rung}"
            bus.publish("environment.task.started", task=task, data={"rung": rung})
            try:
                if rung in self.during:
                    path = self.during[rung]
                    path.write_text(path.read_text(encoding="utf-8") + "# more\n", "utf-8")
                if rung in self.held:
                    await self.release[rung].wait()
                await anyio.lowlevel.checkpoint()
            except anyio.get_cancelled_exc_class():
                cancelled = RungResult(rung=rung, task=task, state="cancelled")
                hooks.rung_finished(cancelled)
                bus.publish("environment.task.cancelled", task=task, data={"rung": rung})
                raise
            state = self.states.get(rung, "green")
            reason = None if state == "green" else f"{rung} found defects"
            result = RungResult(rung=rung, task=task, state=state, reason=reason)
            hooks.rung_finished(result)
            bus.publish("environment.task.completed", task=task, data={"rung": rung})
            results.append(result)
            if result.state != "green":
                break
        return LadderResult(
            id=hooks.ladder_id,
            snapshot=hooks.snapshot.id,
            head=hooks.snapshot.head,
            policy=request.policy or "standard",
            state="green" if all(r.state == "green" for r in results) else "red",
            rungs=results,
            touched=hooks.snapshot.touched,
        )
