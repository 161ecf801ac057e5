"""The habit rules name only real tools and arguments, and merge into existing files."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_habitat.cli import main
from agent_habitat.errors import HabitatError
from agent_habitat.files.models import Edit
from agent_habitat.rules import (
    BEGIN_MARKER,
    END_MARKER,
    RULES_FILES,
    SERVER_TOOL_NAMES,
    TERMINAL_TOOL_NAMES,
    VERIFY_TOOLS,
    rules_block,
    rules_text,
    server_tool_names,
    terminal_tool_names,
)
from agent_habitat.rules_file import write_rules
from agent_habitat.shell.models import LastArgs, RunArgs, WaitArgs
from agent_habitat.verbs import VERBS, AnyVerb
from agent_habitat.verify.models import LadderState

TOOL_NAME = re.compile(r"\b(?:shell|terminal|project|verify|file)_[a-z_]+\b")


def _with_verify_rows() -> tuple[AnyVerb, ...]:
    # The verify rows as the verify wiring adds them: group "verify", verbs run/status/cancel.
    template = VERBS[0]
    rows = [
        dataclasses.replace(template, name=n, group="verify") for n in ("run", "status", "cancel")
    ]
    return (*VERBS, *rows)


def test_the_tool_names_are_the_verb_tables() -> None:
    # The rules keep a copy of the names (printing them loads no table): the same.
    assert {verb.tool_name("shell") for verb in VERBS} == SERVER_TOOL_NAMES
    assert server_tool_names() == SERVER_TOOL_NAMES
    assert terminal_tool_names() == TERMINAL_TOOL_NAMES
    assert {"shell_run", "project_scene", "file_edit"} <= SERVER_TOOL_NAMES
    assert "terminal_run" in TERMINAL_TOOL_NAMES
    assert not any(
        name.startswith(("terminal_project", "terminal_file")) for name in TERMINAL_TOOL_NAMES
    )
    with_verify = server_tool_names(_with_verify_rows())
    assert VERIFY_TOOLS <= with_verify
    assert terminal_tool_names(_with_verify_rows()) == TERMINAL_TOOL_NAMES


def test_every_tool_the_rules_name_is_a_tool_of_the_servers() -> None:
    named = set(TOOL_NAME.findall(rules_block()))
    assert named <= SERVER_TOOL_NAMES | TERMINAL_TOOL_NAMES, named - SERVER_TOOL_NAMES
    assert {"shell_run", "shell_wait", "shell_last", "file_edit", "terminal_run"} <= named


def test_the_verify_rules_appear_exactly_when_the_table_has_the_verify_tools() -> None:
    tools = server_tool_names(_with_verify_rows())
    named = set(TOOL_NAME.findall(rules_block(tools)))
    assert named <= tools | TERMINAL_TOOL_NAMES, named - tools
    assert VERIFY_TOOLS <= named
    expected = VERIFY_TOOLS <= SERVER_TOOL_NAMES
    assert ("verify_run" in rules_block()) is expected


def test_the_arguments_and_states_the_rules_name_exist() -> None:
    text = rules_block(server_tool_names(_with_verify_rows()))
    arguments: list[tuple[str, type[BaseModel]]] = [
        ("background", RunArgs),
        ("yield_after_seconds", RunArgs),
        ("until", WaitArgs),
        ("grep", LastArgs),
        ("tail_lines", LastArgs),
        ("since", LastArgs),
        ("old", Edit),
        ("anchor", Edit),
    ]
    for name, model in arguments:
        assert f"`{name}" in text
        assert name in model.model_fields
    for state in ("green", "nothing_to_verify", "incomplete"):
        assert f"`{state}`" in text
        assert state in typing.get_args(LadderState)


def test_nothing_to_verify_and_incomplete_are_said_not_to_be_green() -> None:
    text = " ".join(rules_block(server_tool_names(_with_verify_rows())).split())
    assert "`nothing_to_verify` means nothing was checked" in text
    assert "`incomplete` that a rung could not run: neither is green" in text


def test_the_rules_stay_short() -> None:
    assert len(rules_block(server_tool_names(_with_verify_rows())).splitlines()) <= 30


def test_cursor_rules_carry_frontmatter_that_always_applies() -> None:
    text = rules_text("cursor")
    assert text.startswith("---\n")
    assert "alwaysApply: true\n---\n" in text
    assert not rules_text("claude").startswith("---")


def test_a_missing_file_is_created(tmp_path: Path) -> None:
    result = write_rules(tmp_path, "cursor")
    assert (result.path, result.action) == (".cursor/rules/habitat.mdc", "created")
    assert (tmp_path / RULES_FILES["cursor"]).read_text(encoding="utf-8") == rules_text("cursor")


def test_the_block_is_appended_after_the_users_text_then_updated_in_place(
    tmp_path: Path,
) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text("# Our project\n\nUse tabs.", encoding="utf-8")
    assert write_rules(tmp_path, "claude").action == "appended"
    assert path.read_text(encoding="utf-8") == "# Our project\n\nUse tabs.\n\n" + rules_block()
    stale = f"intro\n{BEGIN_MARKER}\nold rules\n{END_MARKER}\nfooter\n"
    path.write_text(stale, encoding="utf-8")
    assert write_rules(tmp_path, "claude").action == "updated"
    assert path.read_text(encoding="utf-8") == f"intro\n{rules_block()}footer\n"
    assert write_rules(tmp_path, "claude").action == "unchanged"


def test_a_crlf_file_gets_a_crlf_block(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"# Agents\r\n")
    write_rules(tmp_path, "agents")
    data = path.read_bytes()
    assert data.startswith(b"# Agents\r\n\r\n")
    assert data.count(b"\r\n") == data.count(b"\n")


@pytest.mark.parametrize(
    "broken",
    [f"{BEGIN_MARKER}\nno end\n", f"{END_MARKER}\n{BEGIN_MARKER}\n", f"{BEGIN_MARKER}\n" * 2],
)
def test_broken_markers_are_refused_and_the_file_left_alone(tmp_path: Path, broken: str) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(HabitatError, match="not one pair in order; fix or remove them"):
        write_rules(tmp_path, "agents")
    assert path.read_text(encoding="utf-8") == broken


def test_the_cli_prints_the_rules_or_writes_them_and_says_what_it_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "--for", "agents"]) == 0
    assert capsys.readouterr().out == rules_text("agents")
    (tmp_path / "CLAUDE.md").write_text("mine\n", encoding="utf-8")
    assert main(["rules", "--for", "claude", "--write", "--project", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out == "appended the agent-habitat rules block to CLAUDE.md (your text above is kept)\n"
    (tmp_path / "CLAUDE.md").write_text(f"{BEGIN_MARKER}\n", encoding="utf-8")
    assert main(["rules", "--for", "claude", "--write", "--project", str(tmp_path)]) == 1
    assert "marker" in capsys.readouterr().err
