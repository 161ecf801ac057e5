"""The host as a real detached process: lock, endpoints, security, events, idle exit."""

from __future__ import annotations

import json
import os
import signal
import stat
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from agent_habitat.cli import main
from agent_habitat.reach import HostRecord, ensure_host, find_host
from agent_habitat.reach.launcher import host_files
from agent_habitat.reach.lock import is_held
from agent_habitat.store import Database, SqliteJournal
from agent_habitat.testing import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def uds(record: HostRecord) -> httpx2.AsyncClient:
    transport = httpx2.AsyncHTTPTransport(uds=record.socket)
    return httpx2.AsyncClient(transport=transport, base_url="http://localhost", timeout=10)


def tcp_start(project: Path) -> tuple[HostRecord, str]:
    record = ensure_host(project, tcp="127.0.0.1:0").record
    assert record.tcp is not None
    return record, host_files(project).token()


async def test_a_second_start_finds_the_first_host(project: Path) -> None:
    first = ensure_host(project)
    second = ensure_host(project)
    assert first.started
    assert not second.started
    assert second.record.pid == first.record.pid
    files = host_files(project)
    assert stat.S_IMODE(os.stat(first.record.socket).st_mode) == 0o600
    assert stat.S_IMODE(files.state_dir.stat().st_mode) == 0o700


async def test_a_dead_hosts_lock_is_taken_over(project: Path) -> None:
    first = ensure_host(project).record
    os.kill(first.pid, signal.SIGKILL)
    lock = host_files(project).lock
    await eventually(lambda: not is_held(lock))
    second = ensure_host(project)
    assert second.started
    assert second.record.pid != first.pid
    async with uds(second.record) as client:
        status = (await client.get("/api/status")).json()
    assert status["pid"] == second.record.pid


def test_host_status_and_token_on_the_cli(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["host", "status", "--project", str(project)]) == 1
    assert main(["host", "start", "--project", str(project), "--tcp", "127.0.0.1:0"]) == 0
    assert main(["host", "status", "--project", str(project), "--json"]) == 0
    out = capsys.readouterr().out
    status = json.loads(out[out.index("{\n") :])
    assert status["pid"] == find_host(project).pid  # type: ignore[union-attr]
    assert status["tabs"] == []
    assert status["running"] == []
    assert status["tcp"].startswith("http://127.0.0.1:")
    assert main(["host", "token", "--project", str(project)]) == 0
    assert capsys.readouterr().out.strip() == host_files(project).token()
    assert main(["host", "stop", "--project", str(project)]) == 0
    assert find_host(project) is None


async def test_a_non_loopback_tcp_bind_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["host", "start", "--project", str(project), "--tcp", "0.0.0.0:0"])
    assert code == 2
    assert "--allow-remote" in capsys.readouterr().err
    assert find_host(project) is None


async def test_the_host_refuses_a_state_folder_others_can_write(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = host_files(project)
    files.state_dir.mkdir(parents=True)
    os.chmod(files.state_dir, 0o777)
    assert main(["host", "start", "--project", str(project)]) == 1
    assert "writable by group or others" in capsys.readouterr().err
    assert find_host(project) is None


async def test_tcp_needs_the_token_and_a_local_host_header(shared_project: Path) -> None:
    record, token = tcp_start(shared_project)
    async with httpx2.AsyncClient(base_url=record.tcp or "", timeout=10) as client:
        missing = await client.get("/api/status")
        wrong = await client.get("/api/status", headers={"Authorization": "Bearer wrong"})
        mcp_missing = await client.post("/mcp", json={})
        good = await client.get("/api/status", headers={"Authorization": f"Bearer {token}"})
        query = await client.get(f"/api/status?token={token}")
        bad_host = await client.get(f"/api/status?token={token}", headers={"Host": "evil.example"})
        bad_origin = await client.get(
            f"/api/status?token={token}", headers={"Origin": "http://evil.example"}
        )
    assert [missing.status_code, wrong.status_code, mcp_missing.status_code] == [401] * 3
    assert [good.status_code, query.status_code] == [200, 200]
    assert bad_host.status_code == 421
    assert bad_origin.status_code == 403


async def test_both_protocol_eras_call_tools_over_tcp(shared_project: Path) -> None:
    record, token = tcp_start(shared_project)
    url = f"{record.tcp}/mcp?token={token}"
    async with Client(url, mode="legacy") as legacy:
        old = await legacy.call_tool("shell_run", {"command": "echo legacy"})
    async with Client(url) as modern:
        new = await modern.call_tool("shell_run", {"command": "echo modern"})
    assert old.structured_content is not None
    assert new.structured_content is not None
    assert old.structured_content["output"] == "legacy\n"
    assert new.structured_content["output"] == "modern\n"


async def read_events(
    client: httpx2.AsyncClient, query: str, count: int, **headers: str
) -> list[int]:
    ids: list[int] = []
    async with client.stream("GET", f"/events{query}", headers=headers) as response:
        assert response.status_code == 200
        async for sse in httpx2.EventSource(response):
            if sse.id:
                ids.append(int(sse.id))
                assert json.loads(sse.data)["id"] == int(sse.id)
            if len(ids) == count:
                break
    return ids


async def test_events_resume_from_last_event_id_without_losing_one(project: Path) -> None:
    record, token = tcp_start(project)
    url = f"{record.tcp}/mcp?token={token}"
    async with uds(record) as client, Client(url, mode="legacy") as mcp:
        await mcp.call_tool("shell_run", {"command": "echo one"})
        first = await read_events(client, "", 3)
        # Events happen while nobody listens; a resumed stream must deliver all of them.
        await mcp.call_tool("shell_run", {"command": "echo two"})
        await mcp.call_tool("shell_run", {"command": "echo three", "tab": "other"})
        db = Database(host_files(project).workspace.db_path)
        try:
            # Read as another process reads it: a quick run's end and its event are written
            # right after its answer (shell/end_record), so the last one may come a moment later.
            def third_ended() -> bool:
                return any(
                    e.kind == "shell.run.exited" and e.tab == "other"
                    for e in SqliteJournal(db).since(first[-1])
                )

            await eventually(third_ended, within=30)
            expected = [e.id for e in SqliteJournal(db).since(first[-1])]
        finally:
            db.close()
        resumed = await read_events(client, "", len(expected), **{"Last-Event-ID": str(first[-1])})
        by_query = await read_events(client, f"?since={first[-1]}", len(expected))
        bad = await client.get("/events?since=soon")
    assert first == [1, 2, 3]
    assert len(expected) >= 5
    assert resumed == expected
    assert by_query == expected
    assert bad.status_code == 400


def last_event_id(project: Path) -> int:
    db = Database(host_files(project).workspace.db_path)
    try:
        return max(e.id for e in SqliteJournal(db).since(0))
    finally:
        db.close()


async def test_events_stream_live_events_as_they_happen(shared_project: Path) -> None:
    record, token = tcp_start(shared_project)
    url = f"{record.tcp}/mcp?token={token}"
    async with uds(record) as client, Client(url, mode="legacy") as mcp:
        # The host is shared with the module's other tests: only what happens from here on.
        start = last_event_id(shared_project)
        got: list[str] = []
        async with anyio.create_task_group() as tg:

            async def follow() -> None:
                async with client.stream("GET", f"/events?since={start}") as response:
                    async for sse in httpx2.EventSource(response):
                        got.append(sse.event)
                        if sse.event == "shell.run.exited":
                            return

            tg.start_soon(follow)
            await mcp.call_tool("shell_run", {"command": "echo live"})
    assert "shell.run.started" in got
    assert got[-1] == "shell.run.exited"


async def test_an_unused_host_exits_by_itself(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HABITAT_HOST_IDLE_SECONDS", "0.5")
    record = ensure_host(project).record
    await eventually(lambda: not is_held(host_files(project).lock), within=30)
    await eventually(lambda: _gone(record.pid), within=10)
    db = Database(host_files(project).workspace.db_path)
    try:
        stopped = [e for e in SqliteJournal(db).since(0) if e.kind == "host.stopped"]
    finally:
        db.close()
    assert [e.data["reason"] for e in stopped] == ["idle"]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_status_shows_the_warm_daemon_and_it_stops_with_the_host(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_habitat.proc import ProcessRecord, is_alive, process_create_time
    from agent_habitat.verify.rungs import DmypyDaemon
    from agent_habitat.workspace import Workspace

    record = ensure_host(project).record
    async with uds(record) as client:
        cold = (await client.get("/api/status")).json()
    assert cold["warm"] == {
        "dmypy": {"state": "absent", "pid": None},
        "checkers": [],
        "pytest": {"state": "none"},
    }
    # A stand-in daemon: what the host must stop is whatever pid the status file names.
    daemon = DmypyDaemon(Workspace.for_project(project))
    daemon.dir.mkdir(parents=True, exist_ok=True)
    stand_in = await anyio.open_process(["sleep", "300"], start_new_session=True)
    try:
        daemon.status_file.write_text(json.dumps({"pid": stand_in.pid}), encoding="utf-8")
        created = process_create_time(stand_in.pid)
        assert created is not None
        # And a warm checker's status file (verify/rungs/warm_checker.py), owned by this test.
        checker = Workspace.for_project(project).state_dir / "checker-warm" / f"{os.getpid()}.json"
        checker.parent.mkdir(parents=True, exist_ok=True)
        mine = {"pid": stand_in.pid, "create_time": created, "tool": "basedpyright"}
        mine |= {"owner": os.getpid(), "owner_create_time": process_create_time(os.getpid())}
        checker.write_text(json.dumps(mine), encoding="utf-8")
        assert main(["host", "status", "--project", str(project)]) == 0
        out = capsys.readouterr().out
        assert f"warm: dmypy daemon (pid {stand_in.pid})" in out
        assert f"warm: basedpyright language server (pid {stand_in.pid})" in out
        checker.unlink()
        assert main(["host", "stop", "--project", str(project)]) == 0
        with anyio.fail_after(20):
            await stand_in.wait()
        assert not is_alive(ProcessRecord(stand_in.pid, created))
        assert daemon.state() == "absent"
    finally:
        if stand_in.returncode is None:
            stand_in.kill()
            await stand_in.wait()
