"""`POST /api/verify/wait`: block until a verify task ends; answer its whole epoch.

`habitat verify` through the host hands the request over with `verify_run` (which answers
at once with the task) and then waits here for the verdict: the epoch as the runner keeps
it (`VerifyEpoch`), whose `result` is the climb's full `LadderResult` — every diagnostic,
the selection, the timing — so the CLI prints and exits exactly as the one-shot path does.
Not a verb: the MCP tools answer a model with the lean report (`verify_run` with `wait`);
this route serves the person's terminal. Body `{"task": "<task id>"}`; 400 without one,
404 for a task the runner does not know, 409 when no runner serves a project. A client
that goes away stops the wait, never the verify (`verify_cancel` does that).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_habitat.errors import HabitatError, NotFoundError, UsageError

if TYPE_CHECKING:
    from agent_habitat.habitat import Habitat

__all__ = ["WAIT_ROUTE", "verify_wait_route"]

WAIT_ROUTE = "/api/verify/wait"


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "field": field}, status_code=status)


def verify_wait_route(habitat: Habitat) -> Route:
    async def endpoint(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _error(400, f"the body of {WAIT_ROUTE} is not JSON: {exc}")
        task = body.get("task") if isinstance(body, dict) else None
        if not isinstance(task, str) or not task:
            return _error(
                400, "task: a verify task id is required (verify_run answers one)", "task"
            )
        answer: Response = Response(status_code=499)  # only ever "sent" to a client gone
        async with anyio.create_task_group() as tg:

            async def until_disconnect() -> None:
                while (await request.receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(until_disconnect)
            try:
                epoch = await habitat.verifier.require().wait(task)
                answer = Response(epoch.model_dump_json(), media_type="application/json")
            except NotFoundError as exc:
                answer = _error(404, str(exc), "task")
            except UsageError as exc:
                answer = _error(409, str(exc))
            except HabitatError as exc:
                answer = _error(409, str(exc))
            tg.cancel_scope.cancel()
        return answer

    return Route(WAIT_ROUTE, endpoint, methods=["POST"])
