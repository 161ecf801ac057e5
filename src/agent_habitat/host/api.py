"""The host's JSON API, derived from the verb table: the CLI and the dashboard use it.

* `GET /api/verbs` — every verb: its route name, group, hints, args and result JSON schemas.
* `GET /api/meta` — the contracts a client would otherwise copy: `event_kinds` (every kind
  the habitat publishes, `events.EVENT_KINDS`) and `policies` (each verify policy's rungs,
  `verify.POLICIES`, in order); the dashboard reads both.
* `POST /api/<tool_name>` (`/api/shell_run`, `/api/project_open`, `/api/verify_run`, …) —
  the verb's args model as the JSON body (an empty body is `{}`); 200 with the result
  model as JSON. The same service call as the MCP tool of that name.
* `GET /api/<tool_name>?field=value` — for read-only verbs that need no argument
  (`/api/shell_scene`); query values are validated like a body.

Errors are `{"error": message, "field": name-or-null}`: 400 for input the args model or the
service refuses as malformed (`UsageError`), 404 for a tab or run that does not exist
(`NotFoundError`), 422 for configuration the user must fix (`ConfigError`, naming the
key), 409 for any other refusal (`HabitatError`: a busy tab, no project open).
A request whose client goes away is cancelled, as a Ctrl-C cancels an embedded CLI run
(a quick read-only verb, one without progress, is answered whole: nothing to cancel).
Shell verbs carry the primary server's prefix (`shell_`), so a route and the MCP tool an
agent calls have one name. Every row of `VERBS` gets a route; nothing here lists verbs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_habitat.errors import ConfigError, HabitatError, NotFoundError, UsageError
from agent_habitat.events import EVENT_KINDS
from agent_habitat.habitat import Habitat
from agent_habitat.verbs import PREFIX, VERBS, AnyVerb
from agent_habitat.verify import POLICIES

from .dashboard.tails import tails_route
from .verify_cli import verify_cli_route
from .verify_wait import verify_wait_route

__all__ = ["api_routes", "error_body", "meta", "verb_index"]

logger = logging.getLogger(__name__)


def error_body(message: str, field: str | None = None) -> dict[str, Any]:
    return {"error": message, "field": field}


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse(error_body(message, field), status_code=status)


def _validation_error(exc: ValidationError) -> JSONResponse:
    errors = exc.errors()
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in errors
    )
    field = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else None
    return _error(400, problems, field)


def _needs_no_args(verb: AnyVerb) -> bool:
    return not any(f.is_required() for f in verb.args.model_fields.values())


def verb_index() -> list[dict[str, Any]]:
    """What `GET /api/verbs` answers: one entry per row of the verb table."""
    return [
        {
            "name": verb.tool_name(PREFIX),
            "verb": verb.name,
            "group": verb.group,
            "summary": verb.summary,
            "read_only": verb.read_only,
            "destructive": verb.destructive,
            "idempotent": verb.idempotent,
            "get": verb.read_only and _needs_no_args(verb),
            "args": verb.args.model_json_schema(),
            "result": verb.result.model_json_schema(),
        }
        for verb in VERBS
    ]


def meta() -> dict[str, Any]:
    """What `GET /api/meta` answers."""
    return {
        "event_kinds": list(EVENT_KINDS),
        "policies": {name: list(rungs) for name, rungs in POLICIES.items()},
    }


async def _until_disconnect(request: Request, cancel: anyio.CancelScope) -> None:
    # The body is read by now, so the next message the server sends is the disconnect.
    while (await request.receive())["type"] != "http.disconnect":
        pass
    cancel.cancel()


async def _answer(habitat: Habitat, verb: AnyVerb, args: BaseModel) -> Response:
    try:
        result = await verb.call(habitat, args, None)
    except ValidationError as exc:
        return _validation_error(exc)
    except UsageError as exc:
        return _error(400, str(exc), getattr(exc, "field", None))
    except NotFoundError as exc:
        return _error(404, str(exc))
    except ConfigError as exc:
        # Configuration the user must fix: the CLI exits 2 for it, as for bad input.
        return _error(422, str(exc))
    except HabitatError as exc:
        return _error(409, str(exc))
    except Exception as exc:
        # Request boundary: a bug in a service must answer this request, not kill the host.
        logger.exception("%s failed", verb.tool_name(PREFIX))
        return _error(500, f"internal error in {verb.tool_name(PREFIX)}: {exc!r}")
    return Response(result.model_dump_json(), media_type="application/json")


async def _call(habitat: Habitat, verb: AnyVerb, args: BaseModel, request: Request) -> Response:
    if verb.read_only and not verb.reports_progress:
        # A quick read (the scene, a tail, a status) starts nothing a departed client would
        # want stopped: it answers without a watcher, whose task group and task were about a
        # fifth of the host's CPU per `shell_scene` (1.10 -> 0.85-0.95 ms a call in-process).
        return await _answer(habitat, verb, args)
    # 499 (client closed the request) is only ever "sent" to a client that is gone.
    response: Response = Response(status_code=499)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_until_disconnect, request, tg.cancel_scope)
        response = await _answer(habitat, verb, args)
        tg.cancel_scope.cancel()
    return response


def _endpoint(habitat: Habitat, verb: AnyVerb) -> Callable[[Request], Awaitable[Response]]:
    get_ok = verb.read_only and _needs_no_args(verb)
    name = verb.tool_name(PREFIX)

    async def endpoint(request: Request) -> Response:
        if request.method == "GET":
            if not get_ok:
                return _error(405, f"{name} takes POST with a JSON body of its arguments")
            values: Any = {k: v for k, v in request.query_params.items() if k != "token"}
        else:
            raw = await request.body()
            try:
                values = json.loads(raw) if raw.strip() else {}
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                return _error(400, f"the body of {name} is not JSON: {exc}")
            except RecursionError:
                return _error(
                    400,
                    f"the body of {name} nests too deeply to parse; send a flat JSON object "
                    "of its arguments",
                )
            if not isinstance(values, dict):
                return _error(400, f"the body of {name} must be a JSON object of its arguments")
        try:
            # Query values are text: parsed as strings (`limit=5` is 5); a JSON body is typed
            # and validated strictly, as the MCP tools' arguments are.
            if request.method == "GET":
                args = verb.args.model_validate_strings(values)
            else:
                args = verb.args.model_validate(values)
        except ValidationError as exc:
            return _validation_error(exc)
        return await _call(habitat, verb, args, request)

    return endpoint


def api_routes(habitat: Habitat) -> list[Route]:
    """`/api/verbs`, `/api/meta`, one route per verb of the table, and the dashboard's
    batched tails (`/api/dashboard/tails`, host/dashboard/tails.py), a verdict's wait and
    `habitat status|cancel` as text (`/api/verify/wait`, `/api/verify/cli`)."""

    async def verbs(request: Request) -> Response:
        return JSONResponse(verb_index())

    async def meta_route(request: Request) -> Response:
        return JSONResponse(meta())

    routes = [
        Route("/api/verbs", verbs, methods=["GET"]),
        Route("/api/meta", meta_route, methods=["GET"]),
    ]
    for verb in VERBS:
        routes.append(
            Route(
                f"/api/{verb.tool_name(PREFIX)}",
                _endpoint(habitat, verb),
                methods=["GET", "POST"],
            )
        )
    routes.append(tails_route(habitat))
    routes.append(verify_wait_route(habitat))
    routes.append(verify_cli_route(habitat))
    return routes
