"""`schema.lean_schema` / `output_schema`: what `tools/list` carries, and only that."""

from __future__ import annotations

from typing import Literal

import jsonschema  # type: ignore[import-untyped]
import pytest
from pydantic import BaseModel, Field, ValidationError

from agent_habitat.mcp_tools.schema import lean_schema, output_schema
from agent_habitat.mcp_tools.wire import lean_dump
from agent_habitat.shell import models as m
from agent_habitat.verify.runner.report import EpochReport, RungReport, VerifyRunResult


class Inner(BaseModel):
    """A nested model's docstring."""

    title: str = Field(description="A property may be called `title`.")
    size: int = 0


class Outer(BaseModel):
    """The root's docstring: the tool's description says it."""

    name: str | None = Field(default=None, description="Kept: it says what the field is.")
    limit: int = Field(default=20, description="A default that says something.")
    quiet: bool = False
    state: Literal["a", "b"] | Literal["c"]
    first: Inner
    second: Inner
    only: Inner | None = None


def test_titles_null_branches_and_empty_defaults_go_what_constrains_stays() -> None:
    schema = lean_schema(Outer.model_json_schema())
    props = schema["properties"]
    assert "title" not in schema
    assert "description" not in schema
    assert props["name"] == {"type": "string", "description": "Kept: it says what the field is."}
    assert props["limit"]["default"] == 20
    assert props["quiet"] == {"type": "boolean"}
    assert props["state"] == {"enum": ["a", "b", "c"]}
    assert schema["required"] == ["state", "first", "second"]


def test_a_model_used_twice_is_referenced_and_one_used_once_is_written_in_place() -> None:
    class Once(BaseModel):
        only: Inner

    shared = lean_schema(Outer.model_json_schema())
    assert shared["properties"]["first"] == {"$ref": "#/$defs/Inner"}
    assert set(shared["$defs"]) == {"Inner"}
    assert shared["$defs"]["Inner"]["properties"]["title"]["type"] == "string"
    assert "description" not in shared["$defs"]["Inner"]
    single = lean_schema(Once.model_json_schema())
    assert "$defs" not in single
    assert single["properties"]["only"]["properties"]["size"] == {"type": "integer"}


def test_an_output_schema_is_the_shape_without_descriptions() -> None:
    schema = output_schema(m.RunResult, m.RunArgs)
    assert schema["type"] == "object"
    assert set(schema["properties"]) == set(m.RunResult.model_fields)
    assert "description" not in str(schema)
    assert schema["required"] == ["index", "state", "duration_s"]


def test_the_epoch_nested_in_verify_run_is_referred_to_verify_status() -> None:
    schema = output_schema(VerifyRunResult)
    assert schema["properties"]["result"] == {
        "type": "object",
        "description": "The epoch, as `verify_status` gives it.",
    }
    assert "$defs" not in schema


def test_lean_results_validate_against_their_lean_output_schemas() -> None:
    rung = RungReport(rung="test.scoped", task="v1.test.scoped", state="red", exit_code=1)
    epoch = EpochReport(epoch=1, task="v1", state="red", green=False, rungs=[rung])
    result = VerifyRunResult(
        task="v1", epoch=1, snapshot="s", state="red", green=False, summary="red", result=epoch
    )
    jsonschema.validate(lean_dump(result), output_schema(VerifyRunResult))
    run = m.RunResult(
        tab="main", index=1, command="true", pid=None, state="exited", exit_code=0,
        duration_s=0.1, cwd="/", output="", omitted_bytes=0, output_bytes=0, spool="/s",
        cursor=0,
    )  # fmt: skip
    args = m.RunArgs(command="true")
    jsonschema.validate(lean_dump(run, args), output_schema(m.RunResult, m.RunArgs))


def test_a_tab_name_is_still_checked_where_the_schema_leaves_the_pattern_out() -> None:
    schema = lean_schema(m.LastArgs.model_json_schema())
    assert "pattern" not in schema["properties"]["tab"]
    assert "pattern" in lean_schema(m.RunArgs.model_json_schema())["properties"]["tab"]
    with pytest.raises(ValidationError, match="a tab name is 1-32 letters"):
        m.LastArgs.model_validate({"tab": "no spaces"})


def test_a_description_that_only_says_the_name_goes_one_that_says_more_stays() -> None:
    class Named(BaseModel):
        tab: str = Field(default="main", description="Tab name.")
        exit_code: int = Field(description="Exit code")
        where: str = Field(description="Tab name.")  # says something about `where`
        tab_two: str = Field(description="Tab name; created on first use.")

    props = lean_schema(Named.model_json_schema())["properties"]
    assert props["tab"] == {"default": "main", "type": "string"}
    assert props["exit_code"] == {"type": "integer"}
    assert props["where"]["description"] == "Tab name."
    assert props["tab_two"]["description"] == "Tab name; created on first use."
