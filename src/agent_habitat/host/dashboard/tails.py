"""`POST /api/dashboard/tails`: the live tails of the dashboard's cards in one request.

A card shows the end of its tab's running command. Asked one `shell_last` per tab, eight
tabs printing at full speed cost the page a request per card several times a second and
up to the output cap (16 KiB) per answer, almost all of it thrown away by the card: those
requests and their parsing held the page's main thread, and the stream's events waited
behind them. Here the page asks once for every card on screen, and each answer is cut to
the characters a card keeps before it leaves the host.

Body `{"tabs": {"<tab>": <byte cursor>, ...}, "chars": N}`; answer `{"tails": {"<tab>":
{index, state, running, cursor, omitted_bytes, output}}, "missing": ["<tab>", ...]}`. Each
tail is the verb `last` with `since` (the same service call as `shell_last`); `omitted_bytes`
counts the new bytes that are not in `output`: those `last` left out, the head it kept before
its omitted-output marker (`output` is what follows the marker, never the marker), and those
of the text cut here (counted after its cleaning, so near the raw count, not exactly it). A
tab with no run (or one closed meanwhile) is listed in `missing`, not an error: cards come and go.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_habitat.errors import NotFoundError
from agent_habitat.shell.models import LastArgs, LastResult
from agent_habitat.shell.omitted import split_omitted

if TYPE_CHECKING:
    from agent_habitat.habitat import Habitat

__all__ = ["MAX_TABS", "tails_route"]

MAX_TABS = 32  # more cards than a host runs tabs (HABITAT_MAX_TABS defaults far lower)
MAX_CHARS = 16_384


class TailsArgs(BaseModel):
    tabs: dict[str, int] = Field(max_length=MAX_TABS)
    chars: int = Field(default=3000, ge=1, le=MAX_CHARS)


def _tail(result: LastResult, chars: int) -> dict[str, Any]:
    output = result.output
    omitted = result.omitted_bytes
    split = split_omitted(output)
    if split is not None:
        # A card shows the end: the head `last` kept before its marker is left out too.
        head, _, output = split
        omitted += len(head.encode())
    if len(output) > chars:
        # Counted in characters of the cleaned text, which is what the card keeps.
        omitted += len(output[:-chars].encode())
        output = output[-chars:]
    return {
        "index": result.index,
        "state": result.state,
        "running": result.running,
        "cursor": result.cursor,
        "omitted_bytes": omitted,
        "output": output,
    }


def _refusal(message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "field": field}, status_code=400)


def tails_route(habitat: Habitat) -> Route:
    async def tails(request: Request) -> Response:
        try:
            args = TailsArgs.model_validate(json.loads(await request.body() or b"{}"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _refusal(f"the body of dashboard/tails is not JSON: {exc}")
        except ValidationError as exc:
            err = exc.errors()[0]
            return _refusal(f"{'.'.join(map(str, err['loc']))}: {err['msg']}", str(err["loc"][0]))
        out: dict[str, Any] = {}
        missing: list[str] = []
        for tab, cursor in args.tabs.items():
            try:
                last = LastArgs(tab=tab, since=max(0, cursor))
            except ValidationError as exc:
                err = exc.errors()[0]
                return _refusal(f"tabs.{tab}: {err['loc'][0]}: {err['msg']}", "tabs")
            try:
                out[tab] = _tail(await habitat.shell.last(last), args.chars)
            except NotFoundError:
                missing.append(tab)
        return JSONResponse({"tails": out, "missing": missing})

    return Route("/api/dashboard/tails", tails, methods=["POST"])
