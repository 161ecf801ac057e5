"""The ladder on the real sample project: real ruff, dmypy, pytest and interpreters."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from agent_habitat.cli.demo_sample import break_sample, build_sample, fix_sample
from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.proc import kill_tree
from agent_habitat.verify import LadderRequest, LadderResult, RungName, run_ladder, stop_type_daemon
from agent_habitat.verify.rungs import DmypyDaemon, pyright_tools
from agent_habitat.workspace import Workspace
from mypy_seed import seed_mypy

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
async def calc(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    seed_mypy(root, tmp_path_factory)
    yield root
    await stop_type_daemon(root)


async def _climb(
    root: Path, *rungs: RungName, events: list[Event] | None = None, **request: object
) -> LadderResult:
    bus = InMemoryEventBus(str(root))
    if events is not None:
        bus.subscribe(events.append)
    ladder_request = LadderRequest.model_validate({"rungs": list(rungs) or None, **request})
    return await run_ladder(root, ladder_request, bus=bus)


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


DEFECTS = [
    ("syntax", "diagnose.files", "python-syntax", "SyntaxError"),
    ("lint", "diagnose.files", "ruff", "F401"),
    ("type", "compile.project", "dmypy", "return-value"),
    ("import", "build.affected", "import-smoke", "ValueError"),
    ("test", "test.scoped", "pytest", "AssertionError"),
]


@pytest.mark.parametrize(("defect", "rung", "tool", "code"), DEFECTS)
async def test_each_rung_goes_red_on_its_defect_and_green_when_fixed(
    calc: Path, defect: str, rung: RungName, tool: str, code: str
) -> None:
    changed = break_sample(calc, defect)
    red = await _climb(calc, rung)
    (result,) = red.rungs
    assert result.state == "red", result
    assert red.state == "red"
    assert result.tool == tool
    assert any(d.code == code and d.file for d in result.diagnostics), result.diagnostics
    assert changed in red.touched
    fix_sample(calc, defect)
    fixed = await _climb(calc, rung)
    # Fixed means back to HEAD: nothing changed, so nothing to verify (never a bare green).
    assert fixed.rungs[0].state == "skipped", fixed.rungs[0]
    assert fixed.state == "nothing_to_verify"
    assert fixed.snapshot != red.snapshot


async def test_the_climb_stops_at_the_first_red_rung(calc: Path) -> None:
    break_sample(calc, "lint")
    result = await _climb(calc, policy="strict")
    assert [(r.rung, r.state) for r in result.rungs] == [
        ("diagnose.files", "red"),
        ("compile.project", "skipped"),
        ("build.affected", "skipped"),
        ("test.scoped", "skipped"),
    ]
    assert result.rungs[1].reason == "not reached: diagnose.files is red"
    # No test ran: a selection on this verdict would read as tests chosen for it.
    assert result.selection is None


@pytest.mark.usefixtures("own_interpreter")
async def test_a_green_climb_publishes_started_and_completed_for_each_rung(calc: Path) -> None:
    _append(calc / "src/calc/text.py", "X = 1\n")
    events: list[Event] = []
    result = await _climb(calc, events=events, policy="ci_parity")
    assert result.state == "green", result
    assert [r.state for r in result.rungs] == ["green"] * 5
    kinds = [(e.kind.rsplit(".", 1)[-1], e.data["rung"]) for e in events]
    assert kinds == [(k, r.rung) for r in result.rungs for k in ("started", "completed")]
    assert all(e.task and e.task.startswith(result.id) for e in events)
    scoped = result.rungs[3]
    assert scoped.command[:3] == [sys.executable, "-m", "pytest"]
    assert "tests/test_text.py" in scoped.command
    assert "tests/test_arith.py" not in scoped.command
    assert result.selection is not None
    assert result.selection.tests == ["tests/test_text.py"]


async def test_a_red_rung_publishes_failed_with_its_spool(calc: Path) -> None:
    break_sample(calc, "test")
    events: list[Event] = []
    result = await _climb(calc, "test.scoped", events=events)
    failed = [e for e in events if e.kind == "environment.task.failed"]
    assert len(failed) == 1
    assert failed[0].data["state"] == "red"
    spool = result.rungs[0].spool
    assert spool is not None
    assert "assert -1 == 5" in await anyio.Path(spool).read_text(encoding="utf-8")
    assert result.rungs[0].exit_code == 1


async def test_an_explicit_filter_replaces_the_selection(calc: Path) -> None:
    break_sample(calc, "test")
    result = await _climb(calc, "test.scoped", filter=["-k mul"])
    assert result.rungs[0].state == "green"
    assert result.selection is not None
    assert result.selection.filtered
    assert result.rungs[0].command[-2:] == ["-k", "mul"]


async def test_a_dead_dmypy_daemon_is_restarted_and_the_result_says_so(calc: Path) -> None:
    _append(calc / "src/calc/text.py", "X: int = 1\n")
    first = await _climb(calc, "compile.project")
    assert first.rungs[0].state == "green"
    assert first.rungs[0].notes == ["dmypy daemon started (cold check)"]
    warm = await _climb(calc, "compile.project")
    assert warm.rungs[0].notes == []
    daemon = DmypyDaemon(Workspace.for_project(calc))
    record = daemon.record()
    assert record is not None
    await kill_tree(record, sig=signal.SIGKILL)
    assert daemon.state() == "dead"
    break_sample(calc, "type")
    again = await _climb(calc, "compile.project")
    assert again.rungs[0].state == "red"
    assert again.rungs[0].notes == [
        f"dmypy daemon (pid {record.pid}) was dead; restarted",
        "confirmed by a plain mypy run",  # a red from the daemon is checked before it is said
    ]


async def test_plain_mypy_and_compileall_are_used_when_configured(calc: Path) -> None:
    break_sample(calc, "type")
    plain = await run_ladder(
        calc,
        LadderRequest(rungs=["compile.project"]),
        bus=InMemoryEventBus("t"),
        environ={"HABITAT_LADDER_DMYPY": "false"},
    )
    assert plain.rungs[0].tool == "mypy"
    assert plain.rungs[0].state == "red"
    fix_sample(calc, "type")
    break_sample(calc, "syntax")
    compiled = await run_ladder(
        calc,
        LadderRequest(rungs=["compile.project"]),
        bus=InMemoryEventBus("t"),
        environ={"HABITAT_LADDER_TYPE_CHECKER": "compileall"},
    )
    (rung,) = compiled.rungs
    assert rung.tool == "compileall"
    assert rung.state == "red"
    assert [(d.file, d.code) for d in rung.diagnostics] == [("src/calc/arith.py", "SyntaxError")]
    assert rung.notes[0].startswith("syntax only: type_checker = compileall is configured")


@pytest.mark.usefixtures("own_interpreter")
async def test_a_project_env_without_tools_uses_the_habitat_tools_and_reports_missing_pytest(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "bare"
    await anyio.run_process([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    root = build_sample(tmp_path / "calc", python=str(venv / "bin" / "python"))
    try:
        _append(root / "src/calc/text.py", "X: int = 1\n")
        result = await _climb(root, policy="standard")
        diagnose, compile_, scoped = result.rungs
        assert diagnose.state == "green"
        assert compile_.state == "green"
        assert compile_.command[:4] == [sys.executable, "-P", "-m", "mypy.dmypy"]
        assert "--python-executable" in compile_.command
        assert scoped.state == "skipped"
        assert scoped.missing == "pytest"
        assert scoped.reason is not None
        assert "pytest not installed" in scoped.reason
        assert f"{venv}/bin/python -m pip install pytest" in scoped.reason
        assert f"{venv}/bin/python -m ensurepip" in scoped.reason  # it has no pip to run
        assert result.state == "incomplete"
        assert not result.ok
    finally:
        await stop_type_daemon(root)


async def test_a_manifest_change_runs_the_configured_install_before_the_smoke(calc: Path) -> None:
    pyproject = calc / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + 'install = "echo installing {files}"\n',
        encoding="utf-8",
    )
    _append(calc / "src/calc/text.py", "X = 1\n")
    result = await _climb(calc, "build.affected")
    (rung,) = result.rungs
    assert rung.state == "green"
    assert rung.notes == [
        "reinstalled after pyproject.toml changed: /bin/sh -c 'echo installing pyproject.toml'"
    ]
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace("echo installing", "false"), encoding="utf-8"
    )
    failed = await _climb(calc, "build.affected")
    assert failed.rungs[0].state == "red"
    assert failed.rungs[0].reason == "reinstall failed (exit 1) after pyproject.toml changed"


async def test_a_configured_pyright_runs_with_json_output_and_a_missing_one_is_reported(
    calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "pyright"
    report = (
        '{"generalDiagnostics": [{"file": "src/calc/arith.py", "severity": "error", '
        '"message": "bad return", "range": {"start": {"line": 1, "character": 11}}, '
        '"rule": "reportReturnType"}]}'
    )
    fake.write_text(f"#!/bin/sh\necho '{report}'\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    break_sample(calc, "type")
    bus = InMemoryEventBus("t")
    request = LadderRequest(rungs=["compile.project"])
    result = await run_ladder(
        calc, request, bus=bus, environ={"HABITAT_LADDER_TYPE_CHECKER": "pyright"}
    )
    (rung,) = result.rungs
    assert (rung.tool, rung.state) == ("pyright", "red")
    assert rung.command[:4] == [str(fake), "--outputjson", "--pythonpath", sys.executable]
    assert [(d.file, d.line, d.col, d.code) for d in rung.diagnostics] == [
        ("src/calc/arith.py", 2, 12, "reportReturnType")
    ]
    # The dev install has basedpyright in the habitat's own environment: hide it, and check
    # the project with the base interpreter that environment was made from.
    monkeypatch.setattr(pyright_tools, "OWN_BIN", tmp_path / "no-such-bin")
    base = Path(sys.base_prefix) / "bin" / "python3"
    missing = await run_ladder(
        calc,
        request,
        bus=bus,
        environ={
            "HABITAT_LADDER_TYPE_CHECKER": "basedpyright",
            "HABITAT_LADDER_PYTHON": str(base),
            "HABITAT_LADDER_FETCH_CHECKERS": "false",
        },
    )
    (skipped,) = missing.rungs
    assert skipped.state == "skipped", skipped.command
    assert skipped.missing == f"{base} -m pip install basedpyright"
    assert skipped.reason is not None
    assert "configures basedpyright, which is not installed" in skipped.reason
    assert missing.state == "incomplete"
    assert missing.reason is not None
    assert "pip install basedpyright" in missing.reason


async def test_a_clean_tree_is_nothing_to_verify_with_every_rung_saying_nothing_changed(
    calc: Path,
) -> None:
    result = await _climb(calc, policy="strict")
    assert result.state == "nothing_to_verify"
    assert not result.ok
    assert result.reason is not None
    assert "unchanged since HEAD" in result.reason
    assert result.touched == []
    assert {r.state for r in result.rungs} == {"skipped"}
    assert all(r.reason is not None and "nothing changed" in r.reason for r in result.rungs)


@pytest.mark.usefixtures("own_interpreter")
async def test_a_manifest_change_is_not_installed_into_the_habitats_own_environment(
    calc: Path,
) -> None:
    _append(calc / "pyproject.toml", "\n")
    only_manifest = await _climb(calc, "build.affected")
    assert only_manifest.rungs[0].state == "skipped"
    assert only_manifest.rungs[0].reason is not None
    assert "not reinstalling" in only_manifest.rungs[0].reason
    assert only_manifest.state == "incomplete"
    _append(calc / "src/calc/text.py", "\n")
    with_module = await _climb(calc, "build.affected")
    (rung,) = with_module.rungs
    assert (rung.state, rung.tool) == ("green", "import-smoke")
    assert "not reinstalling" in rung.notes[0]


async def test_a_pyright_finding_that_is_at_head_too_is_listed_but_not_red(
    calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Reports the same finding on `return a + b` in the working tree and in HEAD's export.
    report = (
        '{"generalDiagnostics": [{"file": "src/calc/arith.py", "severity": "error", '
        '"message": "old complaint", "range": {"start": {"line": 4, "character": 4}}, '
        '"rule": "reportSomething"}]}'
    )
    (bin_dir / "pyright").write_text(f"#!/bin/sh\necho '{report}'\nexit 1\n", encoding="utf-8")
    (bin_dir / "pyright").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    _append(calc / "src/calc/text.py", "X = 1\n")
    result = await run_ladder(
        calc,
        LadderRequest(rungs=["compile.project"]),
        bus=InMemoryEventBus("t"),
        environ={"HABITAT_LADDER_TYPE_CHECKER": "pyright"},
    )
    (rung,) = result.rungs
    assert (rung.tool, rung.state) == ("pyright", "green"), rung
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    assert rung.diagnostics[0].preexisting
    assert result.state == "green"


async def test_a_change_no_rung_has_work_for_is_nothing_to_verify_not_green(calc: Path) -> None:
    _append(calc / "README.md", "More words.\n")
    result = await _climb(calc, policy="standard")
    assert {r.state for r in result.rungs} == {"skipped"}
    assert result.state == "nothing_to_verify"
    assert result.reason is not None
    assert "README.md" in result.reason
    assert "gives no rung work" in result.reason
