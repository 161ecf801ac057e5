"""Prompts (slash commands in clients). `status` only: `verify` and `cancel` join with the
verification runner, not before — a prompt that cannot do its job is not listed."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from agent_habitat.habitat import Habitat

from .render import render
from .resources import SCENE_URI

__all__ = ["Prompts"]

_STATUS = types.Prompt(
    name="status",
    title="Habitat status",
    description="The shell tabs as they are now (what runs, what failed last), for a summary.",
    arguments=[],
)


class Prompts:
    """Serves `prompts/list` and `prompts/get`."""

    def __init__(self, habitat: Habitat) -> None:
        self._habitat = habitat

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[_STATUS])

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != _STATUS.name:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown prompt {params.name!r}; this server has: {_STATUS.name}",
            )
        scene = await self._habitat.shell.scene()
        text = (
            f"{self._habitat.project.describe()}\nShell tabs now:\n{render(scene)}\n"
            "Give me a short status: what is running, what ran last in each tab and whether it "
            "failed, and anything that needs my attention."
        )
        return types.GetPromptResult(
            description="Current habitat status",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(text=text)),
                types.PromptMessage(
                    role="user",
                    content=types.EmbeddedResource(
                        resource=types.TextResourceContents(
                            uri=SCENE_URI,
                            mime_type="application/json",
                            text=scene.model_dump_json(),
                        )
                    ),
                ),
            ],
        )
