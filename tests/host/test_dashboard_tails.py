"""The dashboard's batched tails (`/api/dashboard/tails`) in-process, behind the real Guard,
and the event stream's one write per journal read."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import cast

import httpx2
import pytest

from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.host.app import build_app, build_mcp
from agent_habitat.host.dashboard.tails import MAX_CHARS, MAX_TABS
from agent_habitat.host.events_stream import EventStream

pytestmark = pytest.mark.anyio

TOKEN = "test-token"
LINES = 3000


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[httpx2.AsyncClient]:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    async with build_mcp(root) as hosted:
        app = build_app(hosted, token=TOKEN, idle_seconds=0)
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app.asgi),
            base_url="http://localhost:8765",
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=30,
        ) as client:
            yield client


async def test_a_tail_is_cut_to_the_asked_characters_and_resumes_from_its_cursor(
    api: httpx2.AsyncClient,
) -> None:
    command = f"seq 1 {LINES}"
    run = await api.post("/api/shell_run", json={"command": command, "tab": "w"})
    assert run.json()["exit_code"] == 0
    whole = (await api.post("/api/shell_last", json={"tab": "w"})).json()

    first = (await api.post("/api/dashboard/tails", json={"tabs": {"w": 0}, "chars": 200})).json()
    tail = first["tails"]["w"]
    assert len(tail["output"]) == 200
    assert tail["output"].endswith(f"{LINES}\n")
    assert tail["cursor"] == whole["output_bytes"]
    assert tail["omitted_bytes"] >= whole["output_bytes"] - 200
    assert (tail["index"], tail["state"], tail["running"]) == (1, "exited", False)
    assert first["missing"] == []

    again = {"tabs": {"w": tail["cursor"]}, "chars": 200}
    after = (await api.post("/api/dashboard/tails", json=again)).json()["tails"]["w"]
    assert (after["output"], after["omitted_bytes"]) == ("", 0)


async def test_a_tail_past_the_cap_is_what_follows_the_marker_and_counts_the_rest(
    api: httpx2.AsyncClient,
) -> None:
    # More than the output cap: `last` keeps a head, the omitted-output marker, a tail.
    run = await api.post("/api/shell_run", json={"command": "seq 1 40000", "tab": "big"})
    assert run.json()["omitted_bytes"] > 0
    total = run.json()["output_bytes"]
    asked = {"tabs": {"big": 0}, "chars": MAX_CHARS}
    tail = (await api.post("/api/dashboard/tails", json=asked)).json()["tails"]["big"]
    assert "bytes omitted" not in tail["output"]
    assert tail["output"].endswith("\n40000\n")
    # ASCII output: the bytes shown and the bytes counted as left out are all of it.
    assert tail["omitted_bytes"] + len(tail["output"].encode()) == total


async def test_a_tab_without_a_run_is_missing_not_an_error(api: httpx2.AsyncClient) -> None:
    await api.post("/api/shell_run", json={"command": "echo hi", "tab": "w"})
    body = {"tabs": {"w": 0, "gone": 0}}
    answer = (await api.post("/api/dashboard/tails", json=body)).raise_for_status().json()
    assert answer["tails"]["w"]["output"] == "hi\n"
    assert answer["missing"] == ["gone"]


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        (b"{", None, "not JSON"),
        (b'{"tabs": {"a b": 0}}', "tabs", "a b"),
        (b'{"tabs": {}, "chars": 0}', "chars", "greater than or equal to 1"),
        (
            json.dumps({"tabs": {f"t{i}": 0 for i in range(MAX_TABS + 1)}}).encode(),
            "tabs",
            f"at most {MAX_TABS}",
        ),
    ],
)
async def test_a_bad_request_says_what_is_wrong(
    api: httpx2.AsyncClient, body: bytes, field: str | None, says: str
) -> None:
    response = await api.post(
        "/api/dashboard/tails", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert says in response.json()["error"]


async def test_the_tails_need_the_token_over_tcp(api: httpx2.AsyncClient) -> None:
    response = await api.post(
        "/api/dashboard/tails", json={"tabs": {}}, headers={"authorization": "Bearer wrong"}
    )
    assert response.status_code == 401


class Journal:
    def __init__(self, events: list[Event]) -> None:
        self.events = events

    def since(self, event_id: int = 0, limit: int = 1000) -> list[Event]:
        return [e for e in self.events if e.id > event_id][:limit]


async def test_what_one_journal_read_finds_goes_out_as_one_write_after_its_gap() -> None:
    events = [Event(id=i, ts=1.0, kind="host.started", workspace="w") for i in (7, 8, 9)]
    stream = EventStream(Journal(events), InMemoryEventBus("w"))
    frames = cast(AsyncGenerator[bytes], stream._frames(3))
    try:
        assert (await anext(frames)).startswith(b": ")
        chunk = (await anext(frames)).decode()
    finally:
        await frames.aclose()
    assert chunk.startswith('event: journal.gap\ndata: {"kind": "journal.gap", "data": {"after": 3')
    assert [line for line in chunk.splitlines() if line.startswith("id: ")] == [
        "id: 7",
        "id: 8",
        "id: 9",
    ]
