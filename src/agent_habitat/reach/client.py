"""A verb call over the host's JSON API (`host/api.py`), from another process of the user.

The CLI uses it when a host runs for the workspace: the call reaches the host's services
(its tabs, the stdin pipes of its interactive runs) instead of opening the state itself.
Answers come back as the verb's result model; error answers as the `HabitatError` the
service raised there (400 → `UsageError` naming the field, 404 → `NotFoundError`, 409 →
`HabitatError`), so callers treat both paths alike.
"""

from __future__ import annotations

from types import TracebackType

import httpx2
from pydantic import BaseModel, ValidationError

from agent_habitat.errors import ConfigError, HabitatError, NotFoundError, UsageError
from agent_habitat.verbs import PREFIX, AnyVerb

from .lock import HostRecord

__all__ = ["HostApiError", "HostClient"]

_DROPPED = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)
"""The connection went away after it was open: the host hung up, or closed it as kept-alive
and idle while the request went out; not a host that cannot be reached (ConnectError)."""
_RESENDS = 2
"""How many times a call that may run twice is sent again after `_DROPPED` (each on a
connection the pool finds open; a host that keeps hanging up is reported)."""


class HostApiError(UsageError):
    """Input the host refused (400); `field` names the argument when it is one."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class HostClient:
    """`async with HostClient(record) as host: await host.call(verb, args)`."""

    def __init__(self, record: HostRecord) -> None:
        self.record = record
        # No read timeout: a foreground run may take as long as its command does.
        self._http = httpx2.AsyncClient(
            transport=httpx2.AsyncHTTPTransport(uds=record.socket),
            base_url="http://localhost",
            timeout=httpx2.Timeout(None, connect=10.0),
        )

    async def __aenter__(self) -> HostClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._http.aclose()

    async def call(self, verb: AnyVerb, args: BaseModel) -> BaseModel:
        """The verb's result from the host; its refusal as the matching `HabitatError`.

        When the host drops the connection before answering (it closed a kept-alive one as
        the call went out), a call that may safely happen twice (a read-only or idempotent
        verb) is sent again on a fresh connection. Any other call, a run above all, is never
        sent again: the host may have acted on it."""
        name = verb.tool_name(PREFIX)
        content = args.model_dump_json(exclude_unset=True)
        resends = _RESENDS if verb.read_only or verb.idempotent else 0
        while True:
            try:
                response = await self._http.post(
                    f"/api/{name}", content=content, headers={"content-type": "application/json"}
                )
                body = await response.aread()
                break
            except httpx2.TransportError as exc:
                if resends == 0 or not isinstance(exc, _DROPPED):
                    raise self._unanswered(name, exc) from exc
                resends -= 1
        if response.status_code == 200:
            try:
                return verb.result.model_validate_json(body)
            except ValidationError as exc:
                raise HabitatError(f"the host's answer to {name} is not its result: {exc}") from exc
        try:
            error = response.json()
            message, field = str(error["error"]), error.get("field")
        except (ValueError, KeyError, TypeError):
            message, field = body.decode("utf-8", "replace").strip(), None
        if response.status_code == 400:
            raise HostApiError(message, field if isinstance(field, str) else None)
        if response.status_code == 404:
            raise NotFoundError(message)
        if response.status_code == 422:
            raise ConfigError(message)
        if response.status_code == 409:
            raise HabitatError(message)
        raise HabitatError(f"the host answered {name} with HTTP {response.status_code}: {message}")

    def _unanswered(self, name: str, exc: httpx2.TransportError) -> HabitatError:
        return HabitatError(
            f"the workspace host (pid {self.record.pid}) did not answer {name}: {exc}; "
            "see `habitat host status`, or `habitat host stop` to go on without it"
        )
