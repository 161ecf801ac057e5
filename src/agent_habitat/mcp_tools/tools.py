"""Tool definitions built from the shell models, and the one `tools/call` path.

Input schema = the `*Args` model's JSON schema; output schema = the `*Result` model's, with
only the fields a lean dump always carries required (`wire.wire_schema`). A call validates its
arguments (a bad one becomes a tool error naming it), runs the service, and returns the result
as lean structured content (`wire.lean_dump`: no nulls, defaults, echoed arguments or derived
fields; the output body capped in serialized bytes) plus a one-line text block
(`render.brief`). Claude Code, VS Code and Codex give the model the structured content in
place of the text when both are present, and Cursor by every report too
(docs/result-shape.md), so each byte the model needs is there, once. We depart from the
spec's SHOULD (the text block repeating the serialized JSON): that would send every body
twice on the wire for no client that reads it. Refusals (`HabitatError`) are text-only tool
errors.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from agent_habitat.errors import HabitatError, TabLimitError
from agent_habitat.verbs import Progress

from .confirm import ask_person
from .progress import ProgressThrottle
from .render import brief
from .schema import lean_schema, output_schema
from .wire import fit, lean_dump

__all__ = ["ToolDef", "ToolRegistry", "argument_error", "listed", "tool_error"]

logger = logging.getLogger(__name__)

Handler = Callable[[Any, Progress | None], Awaitable[BaseModel]]
"""`(validated args, progress or None) -> result model`."""

Around = Callable[[ServerRequestContext[Any, Any], "ToolDef", Any, Handler], Handler]
"""Wraps a call's handler, knowing the request, the tool and its arguments (accounting)."""


@dataclass(frozen=True)
class ToolDef:
    """One tool: its name, models, description and the service call behind it."""

    name: str
    args: type[BaseModel]
    result: type[BaseModel]
    description: str
    handler: Handler
    reports_progress: bool = False
    annotations: types.ToolAnnotations | None = None
    confirm: Callable[[Any], str] | None = None
    """The question a person must say yes to before the call runs (confirm.py)."""

    def tool(self, same_result_as: types.Tool | None = None) -> types.Tool:
        """The tool as listed; `same_result_as` is a tool listed before it with the same
        result model (`rerun` after `run`), whose output schema this one then refers to
        instead of repeating it, and whose argument descriptions it does not repeat either."""
        if same_result_as is None:
            return types.Tool(
                name=self.name,
                description=self.description,
                input_schema=_schema(self.args),
                output_schema=_output_schema(self.result, self.args),
                annotations=self.annotations,
            )
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=_described_by(_schema(self.args), same_result_as.input_schema),
            output_schema={"type": "object", "description": f"As {same_result_as.name}'s result."},
            annotations=self.annotations,
        )


def _described_by(schema: dict[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` without the descriptions of the arguments `other` has alike (same name,
    constraints and description): the tool says its arguments are as the other's."""
    theirs = other.get("properties", {})
    props = {
        name: {k: v for k, v in prop.items() if k != "description"}
        if theirs.get(name) == prop
        else prop
        for name, prop in schema.get("properties", {}).items()
    }
    return {**schema, "properties": props}


def listed(tools: Sequence[ToolDef]) -> list[types.Tool]:
    """`tools` as `tools/list` gives them: a result model's schema once per list."""
    first: dict[type[BaseModel], types.Tool] = {}
    out = []
    for tool in tools:
        out.append(tool.tool(first.get(tool.result)))
        first.setdefault(tool.result, out[-1])
    return out


@functools.cache
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    # Models do not change at runtime; building their schema on every tools/list does.
    return lean_schema(model.model_json_schema())


@functools.cache
def _output_schema(result: type[BaseModel], args: type[BaseModel]) -> dict[str, Any]:
    return output_schema(result, args)


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def argument_error(tool: str, exc: ValidationError) -> str:
    """One line per bad argument, each naming it."""
    problems = []
    for err in exc.errors():
        name = ".".join(str(part) for part in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown argument `{name}`")
        elif err["type"] == "missing":
            problems.append(f"missing required argument `{name}`")
        else:
            problems.append(f"argument `{name}`: {err['msg']}")
    return f"{tool}: invalid arguments: " + "; ".join(problems)


def _has_progress_token(ctx: ServerRequestContext[Any, Any]) -> bool:
    meta = ctx.meta or {}
    return meta.get("progress_token", meta.get("progressToken")) is not None


class ToolRegistry:
    """The tools one server offers; `tools` is re-read on every call, as the list may change."""

    def __init__(
        self,
        tools: Callable[[], Sequence[ToolDef]],
        before_call: Callable[[], Awaitable[None]] | None = None,
        around: Around | None = None,
        defaults: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        """`defaults`: values a result leaves out when it has them (`cwd`: the project root)."""
        self._tools = tools
        self._before_call = before_call
        self._around = around
        self._defaults = defaults

    def current(self) -> dict[str, ToolDef]:
        return {tool.name: tool for tool in self._tools()}

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed(self._tools()))

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self.current().get(params.name)
        if tool is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {params.name!r}; list the tools to see what exists",
            )
        try:
            args = tool.args.model_validate(params.arguments or {})
        except ValidationError as exc:
            return tool_error(argument_error(tool.name, exc))
        if tool.confirm is not None:
            refused = await ask_person(ctx, tool.confirm(args))
            if refused is not None:
                return tool_error(f"{tool.name}: {refused}")
        if self._before_call is not None:
            await self._before_call()
        throttle = None
        if tool.reports_progress and _has_progress_token(ctx):
            # Only for a request that asked for progress: closing it waits for a report
            # being sent, a turn of the event loop in every call otherwise.
            throttle = ProgressThrottle(ctx.session.report_progress, enabled=True)
        handler = self._around(ctx, tool, args, tool.handler) if self._around else tool.handler
        try:
            result = await handler(args, throttle)
        except HabitatError as exc:
            # The argument by the name this tool takes it (`files`), never a CLI flag's.
            field = getattr(exc, "field", None)
            said = exc.said("`shell_close`") if isinstance(exc, TabLimitError) else str(exc)
            return tool_error(f"{tool.name}: {field}: {said}" if field else f"{tool.name}: {said}")
        except Exception as exc:  # request boundary: a bug must cost one call, not the server
            logger.exception("tool %s failed", tool.name)
            return tool_error(f"{tool.name}: internal error ({type(exc).__name__}: {exc})")
        finally:
            if throttle is not None:
                # Shielded: on cancellation no result is sent, but a write in flight
                # still has to finish before the handler unwinds.
                with anyio.CancelScope(shield=True):
                    await throttle.close()
        result = fit(result)
        return types.CallToolResult(
            content=[types.TextContent(text=brief(result))],
            structured_content=lean_dump(
                result, args, self._defaults() if self._defaults is not None else None
            ),
        )
