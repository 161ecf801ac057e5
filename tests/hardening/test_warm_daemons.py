"""A warm daemon belongs to a habitat process: the one that started it stops it when it
closes (a foreground `habitat verify` included), one whose owner died is stopped by the next
habitat process that closes, and `habitat status` lists it with its owner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.cli import main
from agent_habitat.cli.demo_sample import break_sample, build_sample
from agent_habitat.habitat import Habitat
from agent_habitat.proc import process_create_time
from agent_habitat.proc.record import ProcessRecord, is_alive
from agent_habitat.verify import stop_type_daemon
from agent_habitat.verify.rungs import warm_pytest
from agent_habitat.verify.rungs.dmypy import DmypyDaemon, describe_warm, release
from agent_habitat.verify.rungs.warm_pytest import WarmPytest
from agent_habitat.workspace import Workspace
from mypy_seed import seed_mypy

pytestmark = pytest.mark.anyio


@dataclass
class StandIn:
    workspace: Workspace
    daemon: DmypyDaemon
    process: subprocess.Popen[bytes]

    def owned_by(self, pid: int, create_time: float | None = None) -> None:
        created = create_time if create_time is not None else process_create_time(pid)
        data = {"pid": pid, "create_time": created}
        self.daemon.owner_file.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def stand_in(project: Path) -> Iterator[StandIn]:
    """A real process in the daemon's place (its status file names it)."""
    workspace = Workspace.for_project(project)
    daemon = DmypyDaemon(workspace)
    daemon.dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(["sleep", "3041"])
    daemon.status_file.write_text(json.dumps({"pid": process.pid}), encoding="utf-8")
    yield StandIn(workspace, daemon, process)
    process.kill()
    process.wait()


async def test_a_daemon_whose_owner_died_is_stopped_by_the_next_habitat_to_close(
    stand_in: StandIn,
) -> None:
    stand_in.owned_by(2**22 + 7, create_time=1.0)  # no such process
    assert stand_in.daemon.orphaned()
    assert "no living owner" in describe_warm(stand_in.workspace)
    assert await release(stand_in.workspace)
    assert stand_in.process.wait(timeout=10) is not None
    assert stand_in.daemon.state() == "absent"


async def test_a_daemon_another_living_process_owns_is_left_to_it(stand_in: StandIn) -> None:
    stand_in.owned_by(os.getppid())
    assert f"owned by pid {os.getppid()}" in describe_warm(stand_in.workspace)
    assert not await release(stand_in.workspace)
    assert stand_in.process.poll() is None
    assert stand_in.daemon.state() == "alive"


async def test_the_daemon_stops_when_the_habitat_process_that_claimed_it_closes(
    stand_in: StandIn, project: Path
) -> None:
    async with Habitat.open(stand_in.workspace, project=project, runner=False):
        stand_in.daemon.claim()
        assert stand_in.daemon.owned_here()
    assert stand_in.process.wait(timeout=10) is not None
    assert stand_in.daemon.state() == "absent"


def test_status_lists_the_warm_daemons(
    stand_in: StandIn, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in.owned_by(os.getppid())
    main(["status", "--project", str(project)])
    line = f"warm: dmypy daemon pid {stand_in.process.pid} (owned by pid {os.getppid()}"
    assert line in capsys.readouterr().out


def _dmypy_daemons(status_file: Path) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if str(status_file) in cmdline and "mypy.dmypy" in cmdline:
            found.append(proc.pid)
    return found


def _calc(tmp_path: Path, factory: pytest.TempPathFactory) -> Path:
    """The sample, its workspace's mypy caches seeded (a one-shot verify runs plain mypy)."""
    calc = build_sample(tmp_path / "calc")
    seed_mypy(calc, factory)
    return calc


@pytest.mark.e2e
def test_a_foreground_cli_verify_leaves_no_dmypy_daemon_behind(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    calc = _calc(tmp_path, tmp_path_factory)
    text = calc / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "\nX: int = 1\n", encoding="utf-8")
    daemon = DmypyDaemon(Workspace.for_project(calc))
    try:
        code = main(["verify", "--project", str(calc), "--rung", "compile.project", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert code == 0, out
        # It starts no daemon it would stop at exit: plain mypy over the workspace's cache.
        assert out["rungs"][0]["tool"] == "mypy"
        assert "--cache-dir" in out["rungs"][0]["command"]
        assert daemon.state() == "absent"
        assert _dmypy_daemons(daemon.status_file) == []
    finally:
        anyio.run(stop_type_daemon, calc)


@pytest.mark.e2e
def test_a_type_error_after_a_cached_one_shot_verify_is_red(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # The second one-shot reads the mypy cache the first one wrote: a stale cache must not
    # vouch for the broken module.
    calc = _calc(tmp_path, tmp_path_factory)
    text = calc / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "\nX: int = 1\n", encoding="utf-8")
    argv = ["verify", "--project", str(calc), "--rung", "compile.project", "--json"]
    assert main(argv) == 0, capsys.readouterr().out
    capsys.readouterr()
    break_sample(calc, "type")
    code = main(argv)
    out = json.loads(capsys.readouterr().out)
    assert code == 1, out
    rung = out["rungs"][0]
    assert (rung["state"], rung["tool"]) == ("red", "mypy"), rung
    assert rung["new_findings"] >= 1


@pytest.mark.e2e
def test_a_one_shot_verify_that_selects_no_test_keeps_no_pytest(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A warm pytest costs an interpreter and pytest's imports, on the cores the lint and the
    # type check need: none when test.scoped has nothing to run (a module nothing imports).
    # The one-shot begins its test process before it knows the selection (early_pytest.py);
    # the climb starts none of its own, and the early one is gone once the climb has begun.
    calc = _calc(tmp_path, tmp_path_factory)
    (calc / "src/calc/extra.py").write_text("X = 1\n", encoding="utf-8")
    started: list[Path] = []
    real_start = WarmPytest.start
    early: list[ProcessRecord] = []
    real_begin = warm_pytest.begin_early

    async def spy(self: WarmPytest, *args: object, **kwargs: object) -> str | None:
        started.append(self.dir)
        return await real_start(self, *args, **kwargs)  # type: ignore[arg-type]

    def begin_spy(workspace: Workspace, python: Path, root: Path) -> bool:
        begun = real_begin(workspace, python, root)
        early.extend(z.record for z in warm_pytest._early.values())
        return begun

    monkeypatch.setattr(WarmPytest, "start", spy)
    monkeypatch.setattr(warm_pytest, "begin_early", begin_spy)
    argv = ["verify", "--project", str(calc), "--no-host", "--json"]
    code = main(argv)
    out = json.loads(capsys.readouterr().out)
    scoped = next(r for r in out["rungs"] if r["rung"] == "test.scoped")
    assert (code, scoped["state"]) == (0, "skipped"), out
    assert started == []
    assert len(early) == 1, early  # the early start did begin one: it is not kept
    assert not warm_pytest._early
    assert not any(is_alive(record) for record in early), early
    break_sample(calc, "test")  # a test to run: the prestart is still there
    code = main(argv)
    out = json.loads(capsys.readouterr().out)
    assert code == 1, out
    assert len(started) == 1


@pytest.mark.e2e
def test_a_one_shot_verify_forks_its_tests_from_a_prestarted_pytest_and_leaves_none(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calc = _calc(tmp_path, tmp_path_factory)
    break_sample(calc, "test")
    warm = WarmPytest(Workspace.for_project(calc))
    # The verdict is out before the climb's warm pytest is stopped: that waits for no one.
    printed_before_stop: list[str] = []
    real_stop = WarmPytest.stop_now

    async def stop_now(self: WarmPytest) -> None:
        if self.dir != warm.dir and self.record() is not None:  # the climb's own, running
            printed_before_stop.append(capsys.readouterr().out)
        await real_stop(self)

    monkeypatch.setattr(WarmPytest, "stop_now", stop_now)
    argv = ["verify", "--project", str(calc), "--no-host", "--json"]
    code = main(argv)
    assert len(printed_before_stop) == 1
    out = json.loads(printed_before_stop[0] + capsys.readouterr().out)
    assert printed_before_stop[0].rstrip().endswith("}"), printed_before_stop
    scoped = next(r for r in out["rungs"] if r["rung"] == "test.scoped")
    # Still the truth: the broken add() is red, from the forked run.
    assert (code, scoped["state"]) == (1, "red"), out
    assert any("forked from the warm pytest" in note for note in scoped["notes"]), scoped
    assert warm.record() is None
    assert not warm.status_file.exists()
    # The climb's own zygote, in a folder of its own, is gone with its folder.
    assert list(warm.dir.parent.glob("pytest-warm-*")) == []
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if str(calc) in (p.info["cmdline"] or [])
        and "habitat_pytest_zygote" in str(p.info["cmdline"])
    ]
    assert left == []


def test_a_daemon_a_killed_host_left_stopped_is_continued(tmp_path: Path) -> None:
    # A host stops the warm-up's dmypy start while a verify runs; killed meanwhile, it never
    # continues it, and the daemon (a session of its own) would answer no check again.
    workspace = Workspace(root=tmp_path, state_dir=tmp_path / "state")
    daemon = DmypyDaemon(workspace)
    daemon.dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(["sleep", "3042"], start_new_session=True)
    try:
        daemon.status_file.write_text(json.dumps({"pid": process.pid}), encoding="utf-8")
        os.killpg(process.pid, signal.SIGSTOP)
        stopped = psutil.Process(process.pid)
        deadline = time.monotonic() + 30  # a bound: the signal is taken asynchronously
        while stopped.status() != psutil.STATUS_STOPPED:
            assert time.monotonic() < deadline
        note = daemon.prepare()
        assert note == (
            f"dmypy daemon (pid {process.pid}) was left stopped by an earlier host; continued"
        )
        assert stopped.status() != psutil.STATUS_STOPPED
        assert daemon.prepare() is None  # running: nothing to say
    finally:
        process.kill()
        process.wait()


def test_status_says_no_daemon_as_the_daemon_module_does(tmp_path: Path) -> None:
    # `habitat status` loads the daemon's module only when its status file is there.
    from agent_habitat.verify.runner.cli_text import dmypy_line

    workspace = Workspace.for_project(tmp_path)
    assert DmypyDaemon(workspace).state() == "absent"
    assert dmypy_line(workspace) == describe_warm(workspace)
