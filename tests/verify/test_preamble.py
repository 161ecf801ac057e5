"""The preamble every rung goes through: no work → skipped, configured → run, not Python →
skipped, else the Python body with the project's environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.environments import ProjectEnv
from agent_habitat.verify.layout import Layout
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs import preamble
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.rungs.preamble import python_rung
from agent_habitat.verify.snapshot import Snapshot
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio


def _ctx(
    tmp_path: Path, *, env: ProjectEnv | None, config: LadderConfig | None = None
) -> RungContext:
    return RungContext(
        root=tmp_path,
        workspace=Workspace.for_project(tmp_path),
        config=config or LadderConfig(),
        policy="standard",
        ladder_id="v1",
        snapshot=Snapshot(id="s", head=None, hashes={"a.py": "x"}),
        touched=["a.py"],
        layout=Layout(root=tmp_path, packages={}, test_roots=[], is_python=env is not None),
        env=env,
    )


@python_rung(
    "diagnose.files", no_work=lambda ctx: "no work here" if ctx.policy == "minimal" else None
)
async def _body(ctx: RungContext, env: ProjectEnv) -> RungResult:
    return RungResult(
        rung="diagnose.files", task=ctx.task("diagnose.files"), state="green", tool=str(env.python)
    )


async def test_a_python_project_gets_the_body_with_its_environment(tmp_path: Path) -> None:
    result = await _body(_ctx(tmp_path, env=ProjectEnv(python=tmp_path / "python")))
    assert (result.state, result.tool) == ("green", str(tmp_path / "python"))


async def test_a_project_that_is_not_python_is_skipped_and_says_what_to_configure(
    tmp_path: Path,
) -> None:
    result = await _body(_ctx(tmp_path, env=None))
    assert result.state == "skipped"
    assert result.reason == preamble.NOT_PYTHON


async def test_no_work_comes_first_even_before_a_configured_command(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, env=None, config=LadderConfig.model_validate({"diagnose.files": "false"}))
    ctx.policy = "minimal"
    result = await _body(ctx)
    assert (result.state, result.reason) == ("skipped", "no work here")


async def test_a_configured_command_replaces_the_python_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[object, str]] = []

    async def fake_run(
        ctx: RungContext, rung: str, command: object, *, tool: str, notes: list[str]
    ) -> RungResult:
        calls.append((command, tool))
        return RungResult(rung="diagnose.files", task="t", state="red", tool=tool)

    monkeypatch.setattr(preamble, "run_configured", fake_run)
    config = LadderConfig.model_validate({"diagnose.files": "sh -n {files}"})
    result = await _body(_ctx(tmp_path, env=ProjectEnv(python=tmp_path / "py"), config=config))
    assert (result.state, result.tool) == ("red", "configured")
    assert calls == [("sh -n {files}", "configured")]
