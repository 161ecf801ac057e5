"""`/api/host/token`: the token the running host accepts, and its rotation (unix socket only).

`habitat host token` asks the running host instead of reading the `token` file, so it never
prints a token the host rejects (a deleted or edited file no longer disagrees with the host:
the host writes its own token back). `POST {"rotate": true}` makes a new token, writes it,
and at once ends the old one and every browser session opened with it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_habitat.reach.files import HostFiles

from .credentials import Credentials
from .guard import AUTH_SCOPE_KEY

__all__ = ["token_route"]


def _read(files: HostFiles) -> str | None:
    try:
        return files.token_file.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def token_route(credentials: Credentials, files: HostFiles | None) -> Route:
    async def endpoint(request: Request) -> Response:
        if request.scope.get(AUTH_SCOPE_KEY) != "unix":
            return JSONResponse(
                {
                    "error": "the token is shown and rotated over the unix socket only",
                    "field": None,
                },
                status_code=403,
            )
        rotate = False
        if request.method == "POST":
            try:
                body = await request.json()
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("rotate", False), bool):
                return JSONResponse(
                    {"error": 'the body is {"rotate": true}', "field": "rotate"}, status_code=400
                )
            rotate = body.get("rotate", False)
        rotated, revoked = False, 0
        if rotate:
            revoked = credentials.sessions
            token = credentials.rotate()
            rotated = True
        elif credentials.token is not None:
            token = credentials.token
            if files is not None and _read(files) != token:
                files.write_token(token)  # the file was deleted or edited: the host's wins
        else:
            # Served on the unix socket only: the file's token is what a TCP host would use.
            token = files.token() if files is not None else ""
        return JSONResponse(
            {
                "token": token,
                "rotated": rotated,
                "tcp": credentials.token is not None,
                "sessions_revoked": revoked,
            }
        )

    return Route("/api/host/token", endpoint, methods=["GET", "POST"])
