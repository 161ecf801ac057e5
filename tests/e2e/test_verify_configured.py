"""Configured rung commands (a shell-script project), and processes that die, hang or are
cancelled."""

from __future__ import annotations

from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.testing import eventually
from agent_habitat.verify import LadderRequest, LadderResult, RungName, run_ladder
from git_tree import git as _git

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

GREET = '#!/bin/sh\nname="${1:-world}"\necho "hello, $name"\n'
RUN_TESTS = (
    "#!/bin/sh\n"
    'echo "running ${*:-all}"\n'
    "out=$(sh bin/greet.sh ada)\n"
    '[ "$out" = "hello, ada" ] || { echo "tests/run.sh:4: error: got $out"; exit 1; }\n'
)
LADDER = """
[tool.habitat]
policy = "ci_parity"

[tool.habitat.ladder]
"diagnose.files" = "sh -n {files}"
"compile.project" = ["sh", "-c", "echo compiled {files}"]
"test.scoped" = "sh tests/run.sh {tests}"
"test.full" = ["sh", "tests/run.sh", "full"]
"""


def _project(root: Path, ladder: str = LADDER) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "bin/greet.sh").write_text(GREET, encoding="utf-8")
    (root / "tests/run.sh").write_text(RUN_TESTS, encoding="utf-8")
    (root / "pyproject.toml").write_text(ladder, encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _written(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0


async def _climb(root: Path, *rungs: RungName, events: list[Event] | None = None) -> LadderResult:
    bus = InMemoryEventBus(str(root))
    if events is not None:
        bus.subscribe(events.append)
    return await run_ladder(root, LadderRequest(rungs=list(rungs) or None), bus=bus)


async def test_configured_commands_run_instead_of_the_python_defaults(tmp_path: Path) -> None:
    root = _project(tmp_path / "shproj")
    (root / "bin/greet.sh").write_text(GREET + "\n# touched\n", encoding="utf-8")
    result = await _climb(root)
    assert result.policy == "ci_parity"
    assert [(r.rung, r.state, r.tool) for r in result.rungs] == [
        ("diagnose.files", "green", "configured"),
        ("compile.project", "green", "configured"),
        ("build.affected", "skipped", None),
        ("test.scoped", "green", "configured"),
        ("test.full", "green", "configured"),
    ]
    assert result.rungs[0].command == ["/bin/sh", "-c", "sh -n bin/greet.sh"]
    assert result.rungs[1].command == ["sh", "-c", "echo compiled bin/greet.sh"]
    assert "running all" in result.rungs[3].output
    assert result.rungs[4].command == ["sh", "tests/run.sh", "full"]
    assert result.selection is not None
    assert result.selection.full
    assert result.state == "green"


async def test_a_configured_rung_goes_red_on_its_defect(tmp_path: Path) -> None:
    root = _project(tmp_path / "shproj")
    (root / "bin/greet.sh").write_text("if then\n", encoding="utf-8")
    syntax = await _climb(root)
    assert [r.state for r in syntax.rungs][:2] == ["red", "skipped"]
    (root / "bin/greet.sh").write_text(GREET.replace("hello", "bye"), encoding="utf-8")
    behaviour = await _climb(root)
    scoped = behaviour.rungs[3]
    assert scoped.state == "red"
    assert scoped.exit_code == 1
    assert [(d.file, d.line, d.message) for d in scoped.diagnostics] == [
        ("tests/run.sh", 4, "got bye, ada")
    ]


async def test_a_rung_killed_by_a_signal_is_died_not_red_and_says_which(tmp_path: Path) -> None:
    ladder = LADDER.replace('"sh tests/run.sh {tests}"', '"echo last words; kill -KILL $$"')
    root = _project(tmp_path / "shproj", ladder)
    (root / "bin/greet.sh").write_text(GREET + "\n", encoding="utf-8")
    events: list[Event] = []
    result = await _climb(root, "test.scoped", events=events)
    (rung,) = result.rungs
    assert rung.state == "died"
    assert rung.signal == "SIGKILL"
    assert rung.exit_code == -9
    assert result.state == "died"
    died = [e for e in events if e.kind == "environment.task.died"]
    assert len(died) == 1
    assert died[0].data["signal"] == "SIGKILL"
    assert died[0].data["last_lines"] == ["last words"]


async def test_a_rung_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    ladder = (
        LADDER.replace('"sh tests/run.sh {tests}"', f'"sleep 60 & echo $! > {pidfile}; wait"')
        + "timeout_s = 2\n"  # time for the shell to start its child and name it, under load
    )
    root = _project(tmp_path / "shproj", ladder)
    (root / "bin/greet.sh").write_text(GREET + "\n", encoding="utf-8")
    result = await _climb(root, "test.scoped")
    (rung,) = result.rungs
    assert rung.state == "error"
    assert rung.reason == "timed out after 2 s; process tree killed"
    # Ended by its timeout, not by the child's 60 s: half of them, whatever the load.
    assert rung.duration_s < 30
    child = int(pidfile.read_text(encoding="utf-8"))
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


async def test_cancelling_the_climb_kills_the_running_rung_and_publishes_cancelled(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "rung.pid"
    ladder = LADDER.replace('"sh tests/run.sh {tests}"', f'"echo $$ > {pidfile}; exec sleep 60"')
    root = _project(tmp_path / "shproj", ladder)
    (root / "bin/greet.sh").write_text(GREET + "\n", encoding="utf-8")
    events: list[Event] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: _climb(root, "test.scoped", events=events))
        # Another process writes the file: no event crosses to us.
        await eventually(lambda: _written(pidfile))
        tg.cancel_scope.cancel()
    pid = int(await anyio.Path(pidfile).read_text(encoding="utf-8"))
    # The climb kills the tree before its cancellation finishes: nothing to wait for.
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert [e.kind for e in events] == [
        "environment.task.started",
        "environment.task.cancelled",
    ]
    assert events[1].data["state"] == "cancelled"
