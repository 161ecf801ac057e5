"""`habitat init` merges the habitat's servers into a client's MCP config, never clobbering."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.cli import main
from agent_habitat.client_config import (
    CONFIG_FILES,
    ClientKind,
    ConfigFileError,
    habitat_command,
    install_servers,
)

HABITAT = ["/opt/bin/habitat"]


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("client", "key", "typed"),
    [("claude", "mcpServers", True), ("cursor", "mcpServers", False), ("vscode", "servers", True)],
)
def test_a_new_config_registers_both_servers(
    tmp_path: Path, client: ClientKind, key: str, typed: bool
) -> None:
    result = install_servers(tmp_path, client, HABITAT)
    assert (result.created, [(c.name, c.action) for c in result.servers]) == (
        True,
        [("habitat", "added"), ("habitat-terminal", "added")],
    )
    servers = read(tmp_path / CONFIG_FILES[client])[key]
    kind = {"type": "stdio"} if typed else {}
    assert servers == {
        "habitat": {
            **kind,
            "command": "/opt/bin/habitat",
            "args": ["mcp", "--project", str(tmp_path.resolve())],
        },
        "habitat-terminal": {**kind, "command": "/opt/bin/habitat", "args": ["terminal-mcp"]},
    }


def test_other_servers_and_keys_are_kept_and_an_old_habitat_entry_is_updated(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    before: dict[str, Any] = {
        "inputs": [{"id": "key", "type": "promptString"}],
        "servers": {
            "github": {"type": "http", "url": "https://example.invalid/mcp"},
            "habitat": {
                "type": "stdio",
                "command": "/old/habitat",
                "args": ["mcp"],
                "env": {"A": "1"},
            },
        },
    }
    path.write_text(json.dumps(before), encoding="utf-8")
    result = install_servers(tmp_path, "vscode", HABITAT)
    after = read(path)
    assert after["inputs"] == before["inputs"]
    assert after["servers"]["github"] == before["servers"]["github"]
    assert after["servers"]["habitat"] == {
        "env": {"A": "1"},
        "type": "stdio",
        "command": "/opt/bin/habitat",
        "args": ["mcp", "--project", str(tmp_path.resolve())],
    }
    assert [(c.name, c.action) for c in result.servers] == [
        ("habitat", "updated"),
        ("habitat-terminal", "added"),
    ]
    assert (result.created, result.kept) == (False, ["github"])


def test_an_entry_that_is_not_an_object_is_replaced_and_reported_as_updated(
    tmp_path: Path,
) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"habitat": "junk"}}', encoding="utf-8")
    result = install_servers(tmp_path, "claude", HABITAT)
    assert [(c.name, c.action) for c in result.servers] == [
        ("habitat", "updated"),
        ("habitat-terminal", "added"),
    ]
    assert read(tmp_path / ".mcp.json")["mcpServers"]["habitat"]["command"] == HABITAT[0]


def test_a_second_init_changes_nothing_and_does_not_rewrite(tmp_path: Path) -> None:
    install_servers(tmp_path, "claude", HABITAT)
    path = tmp_path / ".mcp.json"
    inode = path.stat().st_ino
    result = install_servers(tmp_path, "claude", HABITAT)
    assert [c.action for c in result.servers] == ["unchanged", "unchanged"]
    assert path.stat().st_ino == inode


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"mcpServers": {,}}', r"\.mcp\.json is not valid JSON \(line 1, column 17"),
        ("// a comment\n{}", "not valid JSON"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"mcpServers": []}', "`mcpServers` is a list, not an object of servers"),
    ],
)
def test_a_config_that_cannot_be_merged_is_refused_untouched(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigFileError, match=problem):
        install_servers(tmp_path, "claude", HABITAT)
    assert path.read_text(encoding="utf-8") == content


def test_the_cli_says_what_it_did(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"other": {"command": "x"}, "habitat": {}}}', encoding="utf-8")
    assert main(["init", "--client", "cursor", "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (
        "updated .cursor/mcp.json: habitat updated (it existed; now runs this habitat), "
        "habitat-terminal added\nkept the other servers: other\n"
    )
    assert read(path)["mcpServers"]["habitat"]["command"] == habitat_command()[0]
    path.write_text("{oops", encoding="utf-8")
    assert main(["init", "--client", "cursor", "--project", str(tmp_path)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "{oops"


def test_the_command_is_the_running_habitat_by_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launched = tmp_path / "bin" / "habitat"
    launched.parent.mkdir()
    launched.write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["bin/habitat", "init"])
    assert habitat_command() == [str(launched)]
    monkeypatch.setattr(sys, "argv", ["/somewhere/else/pytest"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "python"))
    assert habitat_command() == [str(tmp_path / "venv" / "python"), "-m", "agent_habitat"]
