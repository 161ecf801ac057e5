"""A rung's `duration_s` is the time the climb spent in it, not only its tool's process:
on tabulate a red compile.project said 0.03 s (dmypy's answer) while the plain mypy run that
confirms a daemon's red and the comparison with HEAD took 1.8 s more, which the verdict's
timing then put on the snapshot and selection ("prepare")."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

import agent_habitat.verify.ladder as ladder_module
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder
from agent_habitat.verify.models import RungName, RungResult
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains import Toolchain

pytestmark = pytest.mark.anyio

AFTER_ITS_PROCESS_S = 0.2


async def test_a_rung_s_duration_counts_its_work_after_its_tool_s_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def rung_with_a_second_step(
        ctx: RungContext, rung: RungName, chains: list[Toolchain], fallback: Toolchain
    ) -> RungResult:
        await anyio.sleep(AFTER_ITS_PROCESS_S)  # e.g. a confirming run, a baseline on HEAD
        return RungResult(rung=rung, task=ctx.task(rung), state="green", duration_s=0.01)

    monkeypatch.setattr(ladder_module, "run_rung", rung_with_a_second_step)
    root = build_sample(tmp_path / "calc")
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    result = await run_ladder(root, LadderRequest(policy="minimal"), bus=InMemoryEventBus("t"))
    (rung,) = result.rungs
    assert rung.duration_s >= AFTER_ITS_PROCESS_S, rung
