"""Prompts (slash commands in clients): `verify`, `cancel`, `status`, `project_trust` — a
person's way to do what the verify tools do. `verify`, `cancel` and `project_trust` are listed
while a project is open (a prompt that cannot do its job is not listed); `status` always.
`project_trust` trusts the open project (trust.py) without asking again: a client runs a
prompt only when the person picks it, so picking it is their yes.

`verify` starts a run and waits for it up to `PROMPT_WAIT_SECONDS` (a client waits on a
prompt without progress); a longer run is reported as running, with its task id to follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from agent_habitat.errors import HabitatError
from agent_habitat.habitat import Habitat
from agent_habitat.verify.runner.args import VerifyRunArgs
from agent_habitat.verify.runner.text import render_time

from .render import render
from .resources import EPOCH_URI, SCENE_URI
from .status_prompt import status_text

__all__ = ["PROMPT_WAIT_SECONDS", "Prompts"]

PROMPT_WAIT_SECONDS = 50.0
"""How long `/verify` waits for the result before answering "still running"."""

_STATUS = types.Prompt(
    name="status",
    title="Habitat status",
    description="The shell tabs, the verify epoch (green now? stale?) and where the time went.",
    arguments=[],
)
_VERIFY = types.Prompt(
    name="verify",
    title="Verify the code",
    description="Verify the project's code as it is now and summarize what is red and why.",
    arguments=[
        types.PromptArgument(
            name="policy", description="minimal, standard (default), strict or ci_parity"
        ),
        types.PromptArgument(
            name="files", description="Space-separated files to treat as the change"
        ),
    ],
)
_TRUST = types.Prompt(
    name="project_trust",
    title="Trust this project",
    description=(
        "Trust the open project: the habitat may run its code from now on (its interpreter "
        "and .venv, checker plugins, conftests, configured commands; the warm-up starts)."
    ),
    arguments=[],
)
_CANCEL = types.Prompt(
    name="cancel",
    title="Cancel verify",
    description="Cancel the running verify run (or the task given).",
    arguments=[types.PromptArgument(name="task", description="Task id; default the running run")],
)


def _user(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(text=text))


def _link(uri: str, name: str) -> types.PromptMessage:
    # A link, not the JSON: the text says it once, and a client reads the resource if it wants.
    return types.PromptMessage(
        role="user",
        content=types.ResourceLink(uri=uri, name=name, mime_type="application/json"),
    )


class Prompts:
    """Serves `prompts/list` and `prompts/get`; `session` names the calling connection."""

    def __init__(self, habitat: Habitat, session: Callable[[Any], str] | None = None) -> None:
        self._habitat = habitat
        self._session = session

    def _listed(self) -> list[types.Prompt]:
        if self._habitat.verify is None:
            return [_STATUS]
        return [_VERIFY, _CANCEL, _STATUS, _TRUST]

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=self._listed())

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        names = [p.name for p in self._listed()]
        if params.name not in names:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown prompt {params.name!r}; this server has: {', '.join(names)}",
            )
        arguments = params.arguments or {}
        session = self._session(ctx.session) if self._session else None
        try:
            if params.name == "verify":
                return await self._verify(arguments)
            if params.name == "cancel":
                return await self._cancel(arguments.get("task") or None)
            if params.name == "project_trust":
                return await self._trust()
            return await self._status(session)
        except (HabitatError, ValidationError) as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=f"{params.name}: {exc}") from exc

    async def _verify(self, arguments: dict[str, str]) -> types.GetPromptResult:
        files = (arguments.get("files") or "").split()
        args = VerifyRunArgs.model_validate(
            {"policy": arguments.get("policy") or None, "files": files or None}
        )
        started = await self._habitat.verifier.run(args)
        runner = self._habitat.verifier.require()
        with anyio.move_on_after(PROMPT_WAIT_SECONDS):
            await runner.wait(started.task)
        status = await self._habitat.verifier.status(started.task)
        ask = (
            "Summarize this verify result for me: is the code green now? If not, what is red, "
            "where, and the most likely fix."
            if status.epoch is not None and status.epoch.state not in ("queued", "running")
            else "The verify run is still going; tell me which rung it is on and that "
            f"verify_status(task={started.task!r}) follows it."
        )
        return types.GetPromptResult(
            description=f"Verify: {status.summary}",
            messages=[
                _user(f"{render(status)}\n{ask}"),
                _link(EPOCH_URI, "verify-epoch"),
            ],
        )

    async def _trust(self) -> types.GetPromptResult:
        root = self._habitat.project.root
        if root is None:
            raise HabitatError("no project is open: open one with project_open")
        result = await self._habitat.trust.grant(root, "prompt")
        return types.GetPromptResult(
            description=f"Trust: {result.summary}",
            messages=[
                _user(
                    f"{render(result)}\nI trusted this project myself (the /project_trust "
                    "prompt). Tell me in one line that its code may run now and that the "
                    "warm-up has started."
                )
            ],
        )

    async def _cancel(self, task: str | None) -> types.GetPromptResult:
        result = await self._habitat.verifier.cancel(task)
        return types.GetPromptResult(
            description=f"Cancel: {result.summary}",
            messages=[_user(f"{render(result)}\nTell me in one line what was cancelled.")],
        )

    async def _status(self, session: str | None) -> types.GetPromptResult:
        habitat = self._habitat
        scene = await habitat.shell.scene()
        status = None
        if habitat.verify is not None:
            status = await habitat.verifier.status(None, session)
        time = status.time if status is not None and status.time is not None else None
        text = status_text(
            habitat.project.describe(),
            scene,
            status,
            render_time(time or habitat.accounting.report(session)),
            "Give me a short status: what is running, what ran last in each tab and whether it "
            "failed, whether the code is green now (a stale verify is not), and anything that "
            "needs my attention.",
        )
        messages = [_user(text), _link(SCENE_URI, "scene")]
        if status is not None:
            messages.append(_link(EPOCH_URI, "verify-epoch"))
        return types.GetPromptResult(description="Current habitat status", messages=messages)
