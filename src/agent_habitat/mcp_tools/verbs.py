"""The verb table (`agent_habitat.verbs`) as MCP tools, for a server's prefix and groups."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import mcp.types as types
from pydantic import BaseModel

from agent_habitat.habitat import Habitat
from agent_habitat.verbs import VERBS, AnyVerb, Group, Progress, describe

from .tools import ToolDef

__all__ = ["tool_annotations", "verb_tool", "verb_tools"]


def tool_annotations(verb: AnyVerb) -> types.ToolAnnotations | None:
    """The verb's hints as MCP annotations; none when it claims nothing."""
    if not (verb.read_only or verb.destructive or verb.idempotent):
        return None
    return types.ToolAnnotations(
        read_only_hint=verb.read_only or None,
        destructive_hint=verb.destructive or None,
        idempotent_hint=verb.idempotent or None,
        open_world_hint=False,
    )


def verb_tool(verb: AnyVerb, habitat: Habitat, prefix: str) -> ToolDef:
    async def handler(args: Any, progress: Progress | None) -> BaseModel:
        return await verb.call(habitat, args, progress)

    confirm = None
    if verb.confirm is not None:
        question = verb.confirm

        def confirm(args: Any) -> str:
            return question.format(path=habitat.project.root, project=habitat.project.describe())

    return ToolDef(
        name=verb.tool_name(prefix),
        args=verb.args,
        result=verb.result,
        description=describe(verb, habitat, prefix),
        handler=handler,
        reports_progress=verb.reports_progress,
        annotations=tool_annotations(verb),
        confirm=confirm,
    )


def verb_tools(habitat: Habitat, prefix: str, groups: Collection[Group]) -> list[ToolDef]:
    """Every verb of `groups` as a tool: shell verbs as `{prefix}_<verb>`, others by group."""
    return [verb_tool(verb, habitat, prefix) for verb in VERBS if verb.group in groups]
