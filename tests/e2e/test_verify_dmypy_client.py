"""The warm recheck asked from this process (no `dmypy run` client process) answers what
the client process answers, and a daemon that is gone falls back to the process."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.verify import RungResult, stop_type_daemon
from agent_habitat.verify.parsers import parse_mypy
from agent_habitat.verify.rungs.dmypy_client import run_in_process
from git_tree import git as _git
from ladder_runs import climb_one
from mypy_seed import seed_mypy

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = 'def double(x: int) -> int:\n    return x * 2\n\n\ndef broken() -> int:\n    return "no"\n'


@pytest.fixture
async def calc(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Path]:
    root = tmp_path / "calc"
    (root / "calc").mkdir(parents=True)
    (root / "calc/__init__.py").write_text("", encoding="utf-8")
    (root / "calc/core.py").write_text("def double(x: int) -> int:\n    return x * 2\n", "utf-8")
    (root / ".gitignore").write_text(".mypy_cache/\n__pycache__/\n", encoding="utf-8")
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "calc"\nversion = "0"\n\n[tool.habitat.ladder]\npython = '
        f"{sys.executable!r}\n",
        encoding="utf-8",
    )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "calc")
    (root / "calc/core.py").write_text(CORE, encoding="utf-8")
    seed_mypy(root, tmp_path_factory)  # the daemon's reds are confirmed by plain mypy
    yield root
    await stop_type_daemon(root)


async def _compile(root: Path) -> RungResult:
    return await climb_one(root, "compile.project")


def _keys(result: RungResult) -> set[tuple[str | None, int | None, str | None]]:
    return {(d.file, d.line, d.code) for d in result.diagnostics if d.severity == "error"}


async def test_the_in_process_recheck_answers_what_the_client_process_answers_and_is_confirmed(
    calc: Path,
) -> None:
    cold = await _compile(calc)  # starts the daemon through the `dmypy run` process
    assert cold.state == "red"
    assert _keys(cold) == {("calc/core.py", 6, "return-value")}
    status = next(a for a in cold.command if a.endswith("status.json"))
    outcome = await run_in_process(Path(status), cold.command, calc / "spool.out", 60, 4096)
    assert outcome is not None
    assert outcome.exit_code == 1
    errors = {(d.file, d.line, d.code) for d in parse_mypy(outcome.text, calc)}
    assert errors == _keys(cold)
    warm = await _compile(calc)  # the daemon's red, checked by plain mypy
    assert warm.state == "red"
    assert warm.tool == "dmypy"
    assert "confirmed by a plain mypy run" in warm.notes
    assert _keys(warm) == _keys(cold)
    assert not any("daemon" in note for note in warm.notes), warm.notes


async def test_a_daemon_that_is_gone_is_left_to_the_client_process(calc: Path) -> None:
    cold = await _compile(calc)
    status = next(a for a in cold.command if a.endswith("status.json"))
    await stop_type_daemon(calc)
    assert await run_in_process(Path(status), cold.command, calc / "s.out", 60, 4096) is None
    again = await _compile(calc)
    assert again.state == "red"
    assert any("daemon started" in note for note in again.notes), again.notes


async def test_a_red_the_daemon_alone_reports_is_mypys_green_and_the_daemon_restarts(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (calc / "calc/core.py").write_text("def double(x: int) -> int:\n    return x + x\n", "utf-8")
    first = await _compile(calc)  # the daemon starts, green
    assert first.state == "green"
    status = Path(next(a for a in first.command if a.endswith("status.json")))

    async def drifted(*args: object, **kwargs: object) -> object:
        # What a daemon whose fine-grained state drifted answers: an error mypy does not see.
        outcome = await run_in_process(*args, **kwargs)  # type: ignore[arg-type]
        assert outcome is not None
        outcome.exit_code = 1
        outcome.text = 'calc/core.py:2:5: error: Name "x" already defined on line 1  [no-redef]\n'
        return outcome

    monkeypatch.setattr("agent_habitat.verify.rungs.compile.run_in_process", drifted)
    result = await _compile(calc)
    assert result.state == "green", result
    assert result.tool == "mypy"
    assert any("diverged from a plain mypy run" in note for note in result.notes), result.notes
    assert not status.exists(), "the drifted daemon is still running"
