"""The edit verbs' models are the MCP schemas: every field says what it means."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agent_habitat.files import (
    FILE_EDIT_DESCRIPTION,
    FILE_WRITE_DESCRIPTION,
    FileEditArgs,
    FileEditResult,
    FileWriteArgs,
    FileWriteResult,
    render_file_change,
)
from agent_habitat.project_scene import (
    PROJECT_SCENE_DESCRIPTION,
    ProjectSceneArgs,
    ProjectSceneResult,
)
from agent_habitat.rules import SERVER_TOOL_NAMES, VERIFY_TOOLS

MODELS: list[type[BaseModel]] = [
    FileWriteArgs,
    FileWriteResult,
    FileEditArgs,
    FileEditResult,
    ProjectSceneArgs,
    ProjectSceneResult,
]


def _undescribed(schema: dict[str, Any]) -> list[str]:
    missing = [
        name for name, prop in schema.get("properties", {}).items() if "description" not in prop
    ]
    for definition in schema.get("$defs", {}).values():
        missing += _undescribed(definition)
    return missing


@pytest.mark.parametrize("model", MODELS)
def test_every_field_of_the_schema_has_a_description(model: type[BaseModel]) -> None:
    assert _undescribed(model.model_json_schema()) == []


def test_the_anchor_is_defined_in_the_schema_an_agent_reads() -> None:
    anchor = FileEditArgs.model_json_schema()["$defs"]["Edit"]["properties"]["anchor"]
    assert "exactly once" in anchor["description"]
    assert "first occurrence of `old`" in anchor["description"]


def test_bad_arguments_are_refused_by_the_schema() -> None:
    with pytest.raises(ValidationError):
        FileEditArgs.model_validate({"path": "a", "edits": []})
    with pytest.raises(ValidationError):
        FileEditArgs.model_validate({"path": "a", "edits": [{"old": "", "new": "x"}]})
    with pytest.raises(ValidationError):
        FileWriteArgs.model_validate({"path": "a", "content": "x", "mode": 7})


@pytest.mark.parametrize(
    "description", [FILE_WRITE_DESCRIPTION, FILE_EDIT_DESCRIPTION, PROJECT_SCENE_DESCRIPTION]
)
def test_descriptions_name_only_real_tools_and_need_no_formatting(description: str) -> None:
    named = set(re.findall(r"\b(?:shell|project|verify|file)_[a-z_]+\b", description))
    # The verify tools are DESIGN §4 names: the table gains their rows with the verify wiring.
    assert named <= SERVER_TOOL_NAMES | VERIFY_TOOLS
    assert "{" not in description


def test_a_change_renders_as_one_line() -> None:
    edit = FileEditResult(path="m.py", bytes=12, line_endings="crlf", edits=2)
    write = FileWriteResult(path="n.py", bytes=3, line_endings="lf", created=True)
    assert render_file_change(edit) == "edited m.py: 2 edits, 12 bytes, CRLF line endings\n"
    assert render_file_change(write) == "created n.py, 3 bytes, LF line endings\n"
