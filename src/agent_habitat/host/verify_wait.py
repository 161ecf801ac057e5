"""`POST /api/verify/wait`: follow a verify task to its end; answer its whole epoch.

`habitat verify` through the host hands the request over with `verify_run` (which answers
at once with the task) and then waits here for the verdict. The answer is JSON lines
(`application/x-ndjson`): `{"progress": {"done", "total", "message"}}` whenever a rung
starts or ends (the terminal's live line), then `{"epoch": …}`, the epoch as the runner
keeps it (`VerifyEpoch`), whose `result` is the climb's full `LadderResult` — every
diagnostic, the selection, the timing — so the CLI prints and exits exactly as the
one-shot path does. Not a verb: the MCP tools answer a model with the lean report
(`verify_run` with `wait`); this route serves the person's terminal.

Body `{"task": "<task id>"}`; 400 without one, 404 for a task the runner does not know,
409 when no runner serves a project. A client that goes away stops the wait, never the
verify (`verify_cancel` does that).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agent_habitat.errors import HabitatError, NotFoundError

if TYPE_CHECKING:
    from agent_habitat.habitat import Habitat
    from agent_habitat.verify.runner.runner import VerifyRunner

__all__ = ["WAIT_ROUTE", "verify_wait_route"]

WAIT_ROUTE = "/api/verify/wait"


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "field": field}, status_code=status)


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


async def _follow(habitat: Habitat, runner: VerifyRunner, task: str) -> AsyncIterator[bytes]:
    send, receive = anyio.create_memory_object_stream[bytes](64)

    async def progress(done: float, total: float | None, message: str) -> None:
        await send.send(_line({"progress": {"done": done, "total": total, "message": message}}))

    async def wait() -> None:
        async with send:
            epoch = await runner.wait(task, progress)
            # Worded as verify_run and verify_status word it (a red change undone, say).
            epoch = habitat.verifier.records.told(epoch, runner.root)
            await send.send(b'{"epoch":' + epoch.model_dump_json().encode() + b"}\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        async with receive:
            async for line in receive:
                yield line


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
        try:
            runner = habitat.verifier.require()
            runner.epoch(task)  # an unknown task is refused before the stream begins
        except NotFoundError as exc:
            return _error(404, str(exc), "task")
        except HabitatError as exc:
            return _error(409, str(exc))
        return StreamingResponse(_follow(habitat, runner, task), media_type="application/x-ndjson")

    return Route(WAIT_ROUTE, endpoint, methods=["POST"])
