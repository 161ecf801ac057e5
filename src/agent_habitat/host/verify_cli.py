"""`POST /api/verify/cli`: `habitat status` and `habitat cancel` as the terminal prints them.

The light CLI (`cli/verify_light.py`) sends `{"command": "status" | "cancel", "task":
id-or-null, "json": bool}` and prints the answer `{"stdout": text, "code": exit}`: the
host calls the verify verb (`verify_status`, `verify_cancel`) and renders its result with
`verify.runner.cli_text`, the writer the embedded path uses, so the CLI through a host
prints the same bytes and exits with the same code without importing pydantic or the
ladder. Not a verb: the MCP tools and `/api/verify_status` answer the result model.

Errors are `{"error", "field"}`: 400 for a malformed body or arguments, 404 for a task the
runner does not know, 422 for configuration, 409 for another refusal; the CLI then takes
its full path, which says the same in its own words.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_habitat.errors import ConfigError, HabitatError, NotFoundError, UsageError
from agent_habitat.verbs import verb
from agent_habitat.verify.runner.args import VerifyCancelArgs, VerifyStatusArgs
from agent_habitat.verify.runner.cli_text import cancel_output, status_output
from agent_habitat.verify.runner.report import VerifyCancelResult, VerifyStatusResult

if TYPE_CHECKING:
    from agent_habitat.habitat import Habitat

__all__ = ["CLI_ROUTE", "verify_cli_route"]

CLI_ROUTE = "/api/verify/cli"
logger = logging.getLogger(__name__)


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "field": field}, status_code=status)


async def _output(habitat: Habitat, command: str, task: Any, as_json: bool) -> tuple[str, int]:
    if command == "status":
        status = await verb("status", "verify").call(
            habitat, VerifyStatusArgs.model_validate({"task": task}), None
        )
        assert isinstance(status, VerifyStatusResult)
        return status_output(status, habitat.workspace, as_json=as_json)
    cancel = await verb("cancel", "verify").call(
        habitat, VerifyCancelArgs.model_validate({"task": task}), None
    )
    assert isinstance(cancel, VerifyCancelResult)
    return cancel_output(cancel, as_json=as_json)


def verify_cli_route(habitat: Habitat) -> Route:
    async def endpoint(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            return _error(400, f"the body of {CLI_ROUTE} is not JSON: {exc}")
        if not isinstance(body, dict):
            return _error(400, f"the body of {CLI_ROUTE} must be a JSON object")
        command = body.get("command")
        if command not in ("status", "cancel"):
            return _error(400, "command: 'status' or 'cancel'", "command")
        try:
            text, code = await _output(habitat, command, body.get("task"), bool(body.get("json")))
        except ValidationError as exc:
            return _error(400, str(exc), "task")
        except UsageError as exc:
            return _error(400, str(exc), getattr(exc, "field", None))
        except NotFoundError as exc:
            return _error(404, str(exc), "task")
        except ConfigError as exc:
            return _error(422, str(exc))
        except HabitatError as exc:
            return _error(409, str(exc))
        except Exception as exc:
            # Request boundary: a bug answers this request (the CLI's full path goes on).
            logger.exception("%s failed", CLI_ROUTE)
            return _error(500, f"internal error in {CLI_ROUTE}: {exc!r}")
        return JSONResponse({"stdout": text, "code": code})

    return Route(CLI_ROUTE, endpoint, methods=["POST"])
