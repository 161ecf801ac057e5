"""The early `initialize` answer: the same as the SDK's, and only for ordinary requests."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS as SDK_HANDSHAKE_VERSIONS

from agent_habitat.mcp_tools.handshake import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    PRIMARY,
    TERMINAL,
    Handshake,
    Offer,
    early_answer,
)

from .helpers import make_project, open_primary, open_terminal

pytestmark = pytest.mark.anyio


def _line(params: Any, **envelope: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params} | envelope
    return json.dumps(message).encode()


def _params(**changes: Any) -> dict[str, Any]:
    return {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}},
        "clientInfo": {"name": "claude-code", "version": "2.1.0"},
    } | changes


def _sdk_answer(client: Client) -> dict[str, Any]:
    # What the SDK's `ServerRunner._handle_initialize` built, as the client received it.
    assert client.server_info is not None
    result = types.InitializeResult(
        protocol_version=client.protocol_version,
        capabilities=client.server_capabilities,
        server_info=client.server_info,
        instructions=client.instructions,
    )
    dumped: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def test_the_negotiated_versions_are_the_sdks() -> None:
    assert HANDSHAKE_PROTOCOL_VERSIONS == SDK_HANDSHAKE_VERSIONS


async def test_the_primary_offer_is_what_the_primary_server_answers(tmp_path: Path) -> None:
    async with (
        open_primary(make_project(tmp_path / "p")) as primary,
        Client(primary.server, mode="legacy") as client,
    ):
        assert PRIMARY.result(client.protocol_version) == _sdk_answer(client)


async def test_the_terminal_offer_is_what_the_escape_server_answers(tmp_path: Path) -> None:
    async with (
        open_terminal(cwd=tmp_path) as terminal,
        Client(terminal.server, mode="legacy") as client,
    ):
        assert TERMINAL.result(client.protocol_version) == _sdk_answer(client)


@pytest.mark.parametrize(
    ("offered", "negotiated"),
    [(version, version) for version in SDK_HANDSHAKE_VERSIONS]
    + [("1999-01-01", SDK_HANDSHAKE_VERSIONS[-1]), ("2026-07-28", SDK_HANDSHAKE_VERSIONS[-1])],
)
def test_an_ordinary_initialize_is_answered_with_the_negotiated_version(
    offered: str, negotiated: str
) -> None:
    answer = early_answer(_line(_params(protocolVersion=offered)), PRIMARY)
    assert answer is not None
    request_id, response = answer
    assert request_id == 7
    assert response["id"] == 7
    assert response["result"]["protocolVersion"] == negotiated


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[]",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "initialize", "params": _params()}).encode(),
        _line(_params(), id=True),
        _line(_params(), id=1.5),
        _line(_params(), id=None),
        _line(_params(), jsonrpc="1.0"),
        _line(_params(), extra=1),
        _line(None),
        _line(_params(protocolVersion=20250618)),
        _line(_params(capabilities=[])),
        _line(_params(capabilities={"roots": {"listChanged": "yes"}})),
        _line(_params(capabilities={"sampling": {"tools": True}})),
        _line(_params(capabilities={"experimental": {"x": {"level": 3}}})),
        _line(_params(clientInfo={"name": "c"})),
        _line(_params(clientInfo={"name": "c", "version": 2})),
        _line(_params(clientInfo={"name": "c", "version": "1", "title": 5})),
        _line(_params(clientInfo={"name": "c", "version": "1", "icons": []})),
        _line(_params(clientInfo={"name": "c\ud800", "version": "1"})),
        _line(_params(_meta={"progressToken": 1})),
        _line(_params(more=1)),
    ],
)
def test_anything_unusual_is_left_to_the_sdk(line: bytes) -> None:
    assert early_answer(line, PRIMARY) is None


class _Dumped:
    def __init__(self, request_id: Any, response: dict[str, Any]) -> None:
        self.id = request_id
        self._response = response

    def model_dump_json(self, **_: Any) -> str:
        return json.dumps(self._response)


def _answered(tmp_path: Path, offer: Offer, line: bytes) -> tuple[Handshake, bytes, bytes]:
    """A handshake over real pipes: what the client read back, and what is handed on."""
    client_in, server_out = os.pipe()
    server_in, client_out = os.pipe()
    os.write(client_out, line + b"\n" + b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
    os.close(client_out)
    handshake = Handshake(offer).start(stdin_fd=server_in, stdout_fd=server_out)
    handed_on = handshake.received()
    os.close(server_out)
    with os.fdopen(client_in, "rb") as replies:
        written = replies.read()
    reader = handshake.reader(server_in)
    rest = b""
    while chunk := reader.read(4096):
        rest += chunk
    os.close(server_in)
    assert rest.startswith(handed_on)
    return handshake, written, rest


def test_the_handshake_answers_once_and_hands_every_line_on(tmp_path: Path) -> None:
    line = _line(_params())
    handshake, written, rest = _answered(tmp_path, PRIMARY, line)
    assert json.loads(written) == early_answer(line, PRIMARY)[1]  # type: ignore[index]
    assert rest == line + b"\n" + b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n'
    sent = json.loads(written)
    assert handshake.already_answered(_Dumped(7, sent))
    assert not handshake.already_answered(_Dumped(7, sent)), "only the one duplicate is dropped"


def test_an_unusual_first_line_gets_no_early_answer(tmp_path: Path) -> None:
    line = _line(_params(capabilities={"roots": {"listChanged": "yes"}}))
    handshake, written, rest = _answered(tmp_path, PRIMARY, line)
    assert written == b""
    assert rest.startswith(line + b"\n")
    assert not handshake.already_answered(_Dumped(7, {"error": "x"}))


def test_an_sdk_answer_that_differs_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    handshake, written, _ = _answered(tmp_path, TERMINAL, _line(_params()))
    other = json.loads(written) | {"result": {"capabilities": {}}}
    with caplog.at_level(logging.ERROR):
        assert handshake.already_answered(_Dumped(7, other))
    assert "differs from the SDK's" in caplog.text
