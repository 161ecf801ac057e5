"""compile.project's and test.scoped's work start beside diagnose.files (verify/ahead.py),
and the climb still reports a ladder: real ruff, dmypy and pytest on the sample project."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest

from agent_habitat.cli.demo_sample import break_sample, build_sample
from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.verify import LadderRequest, LadderResult, run_ladder, stop_type_daemon
from mypy_seed import seed_mypy

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
async def calc(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    seed_mypy(root, tmp_path_factory)
    yield root
    await stop_type_daemon(root)


async def _climb(root: Path, events: list[Event]) -> LadderResult:
    bus = InMemoryEventBus(str(root))
    bus.subscribe(events.append)
    return await run_ladder(root, LadderRequest(policy="standard"), bus=bus)


async def test_the_tests_started_beside_the_type_check_report_as_the_climb_reaches_them(
    calc: Path,
) -> None:
    break_sample(calc, "test")
    events: list[Event] = []
    result = await _climb(calc, events)
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "green"),
        ("compile.project", "green"),
        ("test.scoped", "red"),
    ], result
    scoped = result.rungs[2]
    assert any(n.startswith("started beside diagnose.files, ") for n in scoped.notes), scoped
    # Events in the climb's order: the tests' start once the type check is done.
    kinds = [(e.kind.rsplit(".", 1)[-1], e.data["rung"]) for e in events if "rung" in e.data]
    assert kinds == [
        ("started", "diagnose.files"),
        ("completed", "diagnose.files"),
        ("started", "compile.project"),
        ("completed", "compile.project"),
        ("started", "test.scoped"),
        ("failed", "test.scoped"),
    ]
    # The climb's time in each rung adds up within the wall; the tests' own duration is
    # their run's, from its start beside the type check (never the 0.0 of a rung that was
    # done before the climb reached it).
    assert sum(r.climb_s for r in result.rungs) <= result.duration_s
    assert scoped.duration_s > 0.0
    assert scoped.duration_s >= scoped.climb_s - 0.05


async def test_a_red_type_check_leaves_the_tests_started_beside_it_not_reached(
    calc: Path,
) -> None:
    break_sample(calc, "type")  # add() returns a str: its tests fail too
    events: list[Event] = []
    result = await _climb(calc, events)
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "green"),
        ("compile.project", "red"),
        ("test.scoped", "skipped"),
    ], result
    assert result.rungs[2].reason == "not reached: compile.project is red"
    assert result.state == "red"
    assert result.selection is None
    assert not [e for e in events if e.data.get("rung") == "test.scoped"]
    # The tests' processes are gone with the climb (the drop waits for their kill).
    left = [p.cmdline() for p in psutil.Process().children(recursive=True) if _pytest_of(p, calc)]
    assert not left


async def test_a_red_lint_leaves_the_type_check_and_the_tests_started_beside_it_not_reached(
    calc: Path,
) -> None:
    break_sample(calc, "lint")
    events: list[Event] = []
    result = await _climb(calc, events)
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "red"),
        ("compile.project", "skipped"),
        ("test.scoped", "skipped"),
    ], result
    assert result.rungs[1].reason == "not reached: diagnose.files is red"
    assert not [e for e in events if e.data.get("rung") in ("compile.project", "test.scoped")]
    left = [p.cmdline() for p in psutil.Process().children(recursive=True) if _pytest_of(p, calc)]
    assert not left


def _pytest_of(proc: psutil.Process, root: Path) -> bool:
    try:
        return "pytest" in " ".join(proc.cmdline()) and proc.cwd() == str(root)
    except psutil.Error:
        return False  # gone meanwhile
