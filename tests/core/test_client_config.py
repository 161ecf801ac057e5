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
    ("client", "key", "typed", "project"),
    [
        ("claude", "mcpServers", True, []),
        ("cursor", "mcpServers", False, ["--project", "${workspaceFolder}"]),
        ("vscode", "servers", True, ["--project", "${workspaceFolder}"]),
    ],
)
def test_a_new_config_holds_nothing_of_this_machine(
    tmp_path: Path, client: ClientKind, key: str, typed: bool, project: list[str]
) -> None:
    """A file teams commit: `habitat` from PATH, the project as the client knows it."""
    result = install_servers(tmp_path, client)
    assert (result.created, result.pinned, [(c.name, c.action) for c in result.servers]) == (
        True,
        False,
        [("habitat", "added"), ("habitat-terminal", "added")],
    )
    written = (tmp_path / CONFIG_FILES[client]).read_text(encoding="utf-8")
    assert str(tmp_path) not in written
    kind = {"type": "stdio"} if typed else {}
    assert json.loads(written)[key] == {
        "habitat": {**kind, "command": "habitat", "args": ["mcp", *project]},
        "habitat-terminal": {**kind, "command": "habitat", "args": ["terminal-mcp"]},
    }


@pytest.mark.parametrize(("client", "key"), [("claude", "mcpServers"), ("cursor", "mcpServers")])
def test_a_pinned_config_runs_this_habitat_on_this_project(
    tmp_path: Path, client: ClientKind, key: str
) -> None:
    result = install_servers(tmp_path, client, HABITAT)
    assert result.pinned
    servers = read(tmp_path / CONFIG_FILES[client])[key]
    assert servers["habitat"]["command"] == servers["habitat-terminal"]["command"] == HABITAT[0]
    assert servers["habitat"]["args"] == ["mcp", "--project", str(tmp_path.resolve())]


def test_pinning_then_unpinning_updates_the_entries_in_place(tmp_path: Path) -> None:
    install_servers(tmp_path, "claude", HABITAT)
    result = install_servers(tmp_path, "claude")
    assert [c.action for c in result.servers] == ["updated", "updated"]
    assert read(tmp_path / ".mcp.json")["mcpServers"]["habitat"] == {
        "type": "stdio",
        "command": "habitat",
        "args": ["mcp"],
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
    result = install_servers(tmp_path, "vscode")
    after = read(path)
    assert after["inputs"] == before["inputs"]
    assert after["servers"]["github"] == before["servers"]["github"]
    assert after["servers"]["habitat"] == {
        "env": {"A": "1"},
        "type": "stdio",
        "command": "habitat",
        "args": ["mcp", "--project", "${workspaceFolder}"],
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
    result = install_servers(tmp_path, "claude")
    assert [(c.name, c.action) for c in result.servers] == [
        ("habitat", "updated"),
        ("habitat-terminal", "added"),
    ]
    assert read(tmp_path / ".mcp.json")["mcpServers"]["habitat"]["command"] == "habitat"


def test_a_second_init_changes_nothing_and_does_not_rewrite(tmp_path: Path) -> None:
    install_servers(tmp_path, "claude")
    path = tmp_path / ".mcp.json"
    inode = path.stat().st_ino
    result = install_servers(tmp_path, "claude")
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
        install_servers(tmp_path, "claude")
    assert path.read_text(encoding="utf-8") == content


def test_the_cli_says_what_it_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path = tmp_path / "bin"
    on_path.mkdir()
    (on_path / "habitat").write_text("#!/bin/sh\n", encoding="utf-8")
    (on_path / "habitat").chmod(0o755)
    monkeypatch.setenv("PATH", str(on_path))
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"other": {"command": "x"}, "habitat": {}}}', encoding="utf-8")
    assert main(["init", "--client", "cursor", "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (
        "updated .cursor/mcp.json: habitat updated (it existed; now runs habitat as written "
        "here), habitat-terminal added\nkept the other servers: other\n"
    )
    assert read(path)["mcpServers"]["habitat"]["command"] == "habitat"
    path.write_text("{oops", encoding="utf-8")
    assert main(["init", "--client", "cursor", "--project", str(tmp_path)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "{oops"


def test_the_cli_pins_with_absolute_and_warns_when_habitat_is_not_on_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["init", "--client", "claude", "--project", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert "warning: `habitat` is not on this PATH" in said
    assert "habitat init --absolute" in said
    # Said in the user's project: `pipx install .` there would install the project itself.
    assert "pipx install` with the path of its checkout" in said
    assert "pipx install ." not in said
    assert main(["init", "--client", "claude", "--project", str(tmp_path), "--absolute"]) == 0
    assert "pinned to this machine's paths (--absolute)" in capsys.readouterr().out
    entry = read(tmp_path / ".mcp.json")["mcpServers"]["habitat"]
    assert entry["command"] == habitat_command()[0]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-2:] == ["--project", str(tmp_path.resolve())]


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


def test_init_without_a_client_names_the_flag_its_values_and_an_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A new user's trial read argparse's bare "the following arguments are required: --client".
    assert main(["init", "--project", str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert said.startswith("habitat: --client is required")
    assert "claude, cursor, vscode" in said
    assert "`habitat init --client claude`" in said
    assert not (tmp_path / ".mcp.json").exists()
    assert main(["init", "--project", str(tmp_path), "--json"]) == 2
    error = json.loads(capsys.readouterr().err)
    assert error["field"] == "client"
    assert "habitat init --client claude" in error["error"]
