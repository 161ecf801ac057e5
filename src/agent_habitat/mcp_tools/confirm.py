"""A person's yes before a tool runs: the question asked through the client (elicitation).

A verb whose row has `confirm` (`project_trust`) must not run on the agent's word alone:
trusting a project lets its code run. The MCP server asks the client to put the question to
the person (`elicitation/create`, an empty form: a yes or a no) and runs the call only on
`accept`. A client that cannot ask (no elicitation capability) gets a refusal that says how
the person does it themselves: `habitat trust` in a terminal, or the `/project_trust` prompt
(a prompt is a person's own act: clients run one only when the user picks it).
"""

from __future__ import annotations

import logging
from typing import Any

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

__all__ = ["ask_person"]

logger = logging.getLogger(__name__)

_ASK_YOURSELF = (
    "ask the user to run `habitat trust` in a terminal, or to pick the /project_trust prompt"
)


def _can_ask(ctx: ServerRequestContext[Any, Any]) -> bool:
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    try:
        return ctx.session.check_client_capability(wanted)
    except (AttributeError, RuntimeError):  # a connection that never said what it can do
        return False


async def ask_person(ctx: ServerRequestContext[Any, Any], question: str) -> str | None:
    """None when the person said yes; otherwise why the call does not run."""
    if not _can_ask(ctx):
        return f"a person must confirm this and this client cannot ask them: {_ASK_YOURSELF}"
    try:
        answer = await ctx.session.elicit_form(
            question,
            {"type": "object", "properties": {}},
            related_request_id=ctx.request_id,
        )
    except MCPError as exc:
        logger.info("elicitation failed: %s", exc)
        return f"the client could not ask the person ({exc}): {_ASK_YOURSELF}"
    if answer.action == "accept":
        return None
    said = "declined" if answer.action == "decline" else "dismissed the question"
    return f"the user {said}: nothing was done"
