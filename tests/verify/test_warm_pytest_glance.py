"""The warm pytest as `habitat status` and `habitat host status` tell it: warm with its pid,
or fresh with why when running fresh is the right call, never "failed" for that."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_habitat.cli.host_cmd import warm_lines as host_warm_lines
from agent_habitat.verify.pytest_zygote import habitat_pytest_zygote
from agent_habitat.verify.rungs import warm_pytest
from agent_habitat.verify.rungs.warm_pytest import EXITED_AT_START, STAYS_FRESH
from agent_habitat.verify.runner import warmup
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio

WHY = f"pytest imports calc from the project itself (/p/src/calc/__init__.py): {STAYS_FRESH}"


def _record(workspace: Workspace, item: dict[str, Any]) -> None:
    workspace.state_dir.mkdir(parents=True, exist_ok=True)
    path = workspace.state_dir / "warm.json"
    path.write_text(json.dumps({"items": {"pytest": item}}), encoding="utf-8")


def test_the_zygote_says_it_stays_fresh_in_the_words_the_warm_up_reads() -> None:
    source = Path(habitat_pytest_zygote.__file__).read_text(encoding="utf-8")
    assert "from the project itself" in source
    assert STAYS_FRESH in source


async def test_a_pytest_that_imports_the_project_is_fresh_with_why_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuses(*args: object) -> str:
        return EXITED_AT_START + WHY

    # The step imports the warm pytest's `ensure` when it runs (warmup.py loads no step's
    # module before a warm-up runs it).
    monkeypatch.setattr(warm_pytest, "ensure", refuses)
    env = SimpleNamespace(has=lambda name: True, label="venv")
    ctx = SimpleNamespace(
        env=env,
        config=SimpleNamespace(warm_pytest=True),
        workspace=Workspace.for_project(tmp_path),
        root=tmp_path,
        process_env=dict,
    )
    up = warmup.WarmUp.__new__(warmup.WarmUp)
    item = await up._pytest(ctx)  # type: ignore[arg-type]
    assert (item.state, item.detail) == ("fresh", WHY)


def test_status_lines_say_fresh_and_why(tmp_path: Path) -> None:
    workspace = Workspace.for_project(tmp_path)
    _record(workspace, {"state": "fresh", "detail": WHY})
    assert warmup.warm_lines(workspace) == [f"warm: pytest: fresh ({WHY})"]
    glance = warmup.pytest_glance(workspace)
    assert glance == {"state": "fresh", "why": WHY}
    assert host_warm_lines({"dmypy": {"state": "alive", "pid": 7}, "pytest": glance}) == [
        "warm: dmypy daemon (pid 7)",
        f"pytest: fresh ({WHY})",
    ]


def test_host_status_lists_a_warm_pytest_and_one_that_has_exited(tmp_path: Path) -> None:
    assert host_warm_lines(
        {"dmypy": {"state": "stopped"}, "pytest": {"state": "warm", "pid": 9}}
    ) == ["warm: pytest (pid 9), forked per test run"]
    workspace = Workspace.for_project(tmp_path)
    assert warmup.pytest_glance(workspace) == {"state": "none"}
    _record(workspace, {"state": "warm", "detail": "pytest imported (pid 9), forked per run"})
    gone = warmup.pytest_glance(workspace)  # no live warm pytest behind the record
    assert gone == {"state": "cold", "why": "the warm pytest has exited since"}
    assert host_warm_lines({"dmypy": {"state": "stopped"}, "pytest": gone})[-1] == (
        "pytest: not warm, cold (the warm pytest has exited since)"
    )
