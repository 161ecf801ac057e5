"""Gauntlet scenarios that kill real server processes: the embedded MCP server after a
burst of background runs, the workspace host under a bridge, and a verify chain mid-rung.

Every process a scenario starts runs a command no other test uses (`sleep 7xxxx`, a test
sleeping in the sample project), so what is still alive afterwards is counted exactly.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import psutil
from gauntlet_fuzz import bad_lines
from gauntlet_wire import Unanswered, Wire, poll_until

from agent_habitat.reach.launcher import find_host, stop_host
from agent_habitat.workspace import Workspace

BURST = 8


def _marked(prefix: str, project: Path) -> dict[int, str]:
    """Live processes of `project`'s runs running `sleep <prefix>…`: pid → their
    HABITAT_RUN_ID. Their folder tells them from another gauntlet's on the same machine."""
    found: dict[int, str] = {}
    for proc in psutil.process_iter(["cmdline", "status", "environ", "cwd"]):
        cmd = proc.info["cmdline"] or []
        if len(cmd) == 2 and cmd[0] == "sleep" and cmd[1].startswith(prefix):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and proc.info["cwd"] == os.path.realpath(
                project
            ):
                found[proc.pid] = (proc.info["environ"] or {}).get("HABITAT_RUN_ID", "")
    return found


def _rows(project: Path) -> dict[int, str]:
    db = Workspace.for_project(project).db_path
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT id, state FROM runs").fetchall())


def _hosts_of(root: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "agent_habitat.host" in cmd and str(root) in cmd:
            found.append(proc)
    return found


async def _stop_hosts(root: Path) -> int:
    """Stop the workspace's host, and one a closing bridge started a moment before it closed
    (it takes the lock after `stop_host` looked); how many needed the second stop."""
    stop_host(root)
    late = 0
    if not await poll_until(lambda: not _hosts_of(root), within=5):
        for proc in _hosts_of(root):
            late += 1
            with contextlib.suppress(psutil.Error):
                proc.kill()
    return late


def _strays(prefix: str, project: Path) -> int:
    left = _marked(prefix, project)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(left)


async def server_kills(
    project: Path, env: dict[str, str], rng: random.Random, rounds: int
) -> dict[str, Any]:
    """SIGKILL of `habitat mcp --embedded` 0–60 ms after a burst of background runs; the next
    server must know every run whose process lives (none lost, no id reused), and closing
    the tabs must leave nothing running."""
    argv = ["mcp", "--embedded", "--project", str(project)]
    lost = reused = left = unanswered = lines = lines_unanswered = 0
    seen_markers: set[str] = set()
    for n in range(rounds):
        prefix = f"7{n:03d}"
        wire = await Wire.start(argv, project, env)
        for k in range(BURST):
            params = {"command": f"sleep {prefix}{k}", "tab": f"k{k}", "background": True}
            await wire.send(
                {
                    "jsonrpc": "2.0",
                    "id": 10 + k,
                    "method": "tools/call",
                    "params": {"name": "shell_run", "arguments": params},
                }
            )
        await anyio.sleep(rng.uniform(0, 0.06))
        wire.kill()
        await wire.close()
        # The runs that did start have a row (written before the spawn) saying running.
        await anyio.sleep(0.2)  # a process forked just before the kill finishes its exec
        rows = _rows(project)
        for _pid, marker in _marked(prefix, project).items():
            run_id = int(marker.split("-")[1]) if marker.startswith("run-") else -1
            if rows.get(run_id) != "running":
                lost += 1
            if marker in seen_markers:
                reused += 1
            seen_markers.add(marker)
        after = await Wire.start(argv, project, env)
        try:
            sent, missed = await bad_lines(after)
            lines, lines_unanswered = lines + sent, lines_unanswered + missed
            scene = await after.call("shell_scene", {})
            for tab in scene.get("tabs", []):  # the wire leaves an empty list out
                await after.call("shell_close", {"tab": tab["name"]})
        except Unanswered:
            unanswered += 1
        finally:
            await after.close()
        left += _strays(prefix, project)
    return {
        "server kills": rounds,
        "server kills survived": rounds - unanswered,
        "runs lost": lost,
        "run ids reused": reused,
        "processes left": left,
        "malformed lines": lines,
        "unanswered lines": lines_unanswered,
    }


async def host_kills(
    project: Path, env: dict[str, str], rng: random.Random, kills: int
) -> dict[str, Any]:
    """SIGKILL of the workspace host at random moments (idle, or with a foreground run in
    flight) under one `habitat mcp` bridge: the bridge restarts it and the next call works."""
    recovered = unanswered = in_flight_answered = in_flight = late = 0
    wire = await Wire.start(["mcp", "--project", str(project)], project, env)
    try:
        for n in range(kills):
            host = find_host(project)
            if host is None:
                await wire.call("shell_scene", {}, within=60)
                host = find_host(project)
            assert host is not None, "the bridge started no host"
            if rng.random() < 0.5:
                in_flight += 1
                request = {
                    "jsonrpc": "2.0",
                    "id": 500 + n,
                    "method": "tools/call",
                    "params": {"name": "shell_run", "arguments": {"command": "sleep 0.3"}},
                }
                await wire.send(request)
                await anyio.sleep(rng.uniform(0, 0.3))
                os.kill(host.pid, signal.SIGKILL)
                try:
                    with anyio.fail_after(90):
                        await wire.answer(500 + n)
                    in_flight_answered += 1
                except TimeoutError:
                    unanswered += 1
            else:
                await anyio.sleep(rng.uniform(0, 0.1))
                os.kill(host.pid, signal.SIGKILL)
            # A bridge that has not met the death yet meets it with this call: its answer says
            # so (a tool error naming the restart) or is the result; never silence.
            try:
                await wire.call("shell_scene", {}, within=90)
            except RuntimeError as exc:
                if "restarted" not in str(exc):
                    raise
            except Unanswered:
                unanswered += 1
            try:
                result = await wire.call("shell_run", {"command": f"echo alive-{n}"}, within=90)
                recovered += int(result["output"] == f"alive-{n}\n")
            except (Unanswered, RuntimeError):
                unanswered += 1
    finally:
        await wire.close()
        late = await _stop_hosts(project)
    return {
        "host kills": kills,
        "hosts started as the bridge closed": late,
        "bridge recovered": recovered,
        "in-flight calls answered": f"{in_flight_answered}/{in_flight}",
        "unanswered calls": unanswered,
    }


_SLOW_TEST = "import time\n\n\ndef test_slow() -> None:\n    time.sleep(120)\n"


_ZYGOTE = "habitat_pytest_zygote"


def _pytest_of(root: Path) -> list[psutil.Process]:
    """The test processes of `root`'s runs: a fresh pytest, or a warm run (its client; the
    warm pytest's fork and its fork keep its argv). The warm pytest itself is not one: the
    host keeps it for the next run, and it is gone when the host is."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd", "status", "ppid"]):
        # Not the project's path: under pytest it is /tmp/pytest-of-…, in the host's argv too.
        cmd = " ".join(proc.info["cmdline"] or []).replace(str(root), "")
        if "pytest" in cmd and proc.info["cwd"] == str(root):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and not _is_warm_pytest(proc, cmd):
                found.append(proc)
    return found


def _is_warm_pytest(proc: psutil.Process, cmd: str) -> bool:
    if _ZYGOTE not in cmd:
        return False
    try:
        parent = " ".join(psutil.Process(proc.info["ppid"]).cmdline())
    except psutil.Error:
        return False  # an orphaned fork of it is a run left behind
    return _ZYGOTE not in parent


async def verify_killed_mid_rung(project: Path, env: dict[str, str], how: str) -> dict[str, Any]:
    """A verify chain whose test rung hangs, stopped mid-rung by `verify_cancel` or by a
    SIGKILL of the host: its test processes must be gone and its state not green."""
    from agent_habitat.cli.demo_sample import build_sample

    root = build_sample(project)
    (root / "tests" / "test_slow_gauntlet.py").write_text(_SLOW_TEST, encoding="utf-8")
    wire = await Wire.start(["mcp", "--project", str(root)], root, env)
    left = green = late = 0
    state = "unknown"
    try:
        await wire.call("verify_run", {"policy": "standard"}, within=120)
        if not await poll_until(lambda: bool(_pytest_of(root)), within=240):
            status = await wire.call("verify_status", {}, within=120)
            raise RuntimeError(f"the test rung never started: {status.get('reason')}")
        if how == "cancel":
            await wire.call("verify_cancel", {}, within=60)
        else:
            host = find_host(root)
            assert host is not None
            os.kill(host.pid, signal.SIGKILL)
            try:  # the bridge meets the dead host here: its answer says it restarted one
                await wire.call("shell_scene", {}, within=180)
            except RuntimeError as exc:
                if "restarted" not in str(exc):
                    raise
        # Cancelled: gone within 2 s (DESIGN §5); a dead host's: killed by the next one.
        await poll_until(lambda: not _pytest_of(root), within=10)
        left = len(_pytest_of(root))
        # The latest epoch: a host that died mid-rung took its task's id with it.
        status = await wire.call("verify_status", {}, within=120)
        epoch = status.get("epoch") or {}
        state = str(epoch.get("state") or "no epoch recorded")
        green = int(bool(status.get("green")))
    finally:
        for proc in _pytest_of(root):
            proc.kill()
        await wire.close()
        late = await _stop_hosts(root)
    return {
        f"verify {how}: hosts started as the bridge closed": late,
        f"verify {how} mid-rung: processes left": left,
        f"verify {how}: state": state,
        f"verify {how}: reported green": green,
    }
