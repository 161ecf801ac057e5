"""The verb table drives the primary and escape servers' tool lists."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from agent_habitat.mcp_tools.schema import lean_schema, output_schema
from agent_habitat.verbs import VERBS

from .helpers import make_project, open_primary, open_terminal

pytestmark = pytest.mark.anyio

SHELL = [row for row in VERBS if row.group == "shell"]


async def test_every_shell_row_is_a_shell_and_a_terminal_tool_and_project_open_primary_only(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "p")
    async with (
        open_primary(project, cwd=project) as primary,
        open_terminal(cwd=project) as terminal,
        Client(primary.server, mode="legacy") as shell,
        Client(terminal.server, mode="legacy") as escape,
    ):
        primary_tools = {t.name: t for t in (await shell.list_tools()).tools}
        escape_tools = {t.name: t for t in (await escape.list_tools()).tools}
    others = {"project_open", "project_scene", "project_trust", "file_write", "file_edit"}
    others |= {"verify_run", "verify_status", "verify_cancel"}
    assert set(primary_tools) == {f"shell_{row.name}" for row in SHELL} | others
    assert set(escape_tools) == {f"terminal_{row.name}" for row in SHELL} | {"terminal_host"}
    for row in SHELL:
        for tool in (primary_tools[f"shell_{row.name}"], escape_tools[f"terminal_{row.name}"]):
            schema = lean_schema(row.args.model_json_schema())
            if row.name == "rerun":  # the arguments it has as run has are described there
                run = primary_tools["shell_run"].input_schema["properties"]
                for name, prop in schema["properties"].items():
                    if run.get(name) == prop:
                        del prop["description"]
            assert tool.input_schema == schema
            hints = tool.annotations
            assert bool(hints and hints.read_only_hint) is row.read_only
            assert bool(hints and hints.destructive_hint) is row.destructive
            assert tool.output_schema is not None
            if row.name == "rerun":  # its result is run's, described once per list
                prefix = tool.name.split("_")[0]
                assert tool.output_schema == {
                    "type": "object",
                    "description": f"As {prefix}_run's result.",
                }
            else:  # the model's fields, with only those a lean dump always carries required
                assert tool.output_schema == output_schema(row.result, row.args)
                assert set(tool.output_schema["properties"]) == set(row.result.model_fields)
    assert "terminal_" in (escape_tools["terminal_run"].description or "")
    assert "shell_" not in (escape_tools["terminal_run"].description or "")
    opened = primary_tools["project_open"]
    assert opened.annotations is not None
    assert opened.annotations.idempotent_hint is True
