"""The `initialize` handshake answered while the MCP SDK is still being imported.

Importing the SDK (mcp 2.3.0) costs about a second of CPU before a server can exist: the
package's `__init__` imports its client and the pydantic models of both protocol eras, so no
choice of submodules avoids it. The answer to `initialize` does not depend on any of it:
it is the server's name, version, instructions and capabilities, and the protocol version
negotiated from the client's offer. So the stdio servers start a `Handshake` first: a thread
that reads the client's first line and, when it is an ordinary `initialize`, writes that
answer at once, while the main thread imports the SDK and opens the habitat.

The SDK still receives that same `initialize` line first (its connection state comes from
it) and answers it; `Handshake.already_answered` drops that second answer so the client
sees one, and logs an error if the two ever differ (a test keeps them equal for both
servers and every protocol version). A first line that is anything else, or an
`initialize` with anything unusual in it, is left to the SDK alone, answered as before.
"""

from __future__ import annotations

import io
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "PRIMARY",
    "PRIMARY_INSTRUCTIONS",
    "TERMINAL",
    "TERMINAL_INSTRUCTIONS",
    "Handshake",
    "Offer",
    "early_answer",
]

logger = logging.getLogger(__name__)

HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The SDK's `mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS` (a test keeps them equal): a
client offering another version is answered with the newest of these, as the SDK does."""

PRIMARY_INSTRUCTIONS = (
    "agent-habitat: persistent shell tabs shared with the person beside you. Run commands with "
    "shell_run (tabs keep cwd and exported variables; different tabs run in parallel), check "
    "what is running with shell_scene, follow long or background runs with shell_wait and "
    "shell_last. Runs survive server restarts. Open another project with project_open. "
    "With a project open, verify_run checks the code as it is now (background; wait=true to "
    "block) and verify_status says whether it is still green: a stale result is not."
)

TERMINAL_INSTRUCTIONS = (
    "agent-habitat escape terminal: shell tabs (terminal_*) that do not depend on the primary "
    "habitat server. Use them when shell_* tools hang or the primary server is down; its tabs "
    "are separate from the primary's."
)


@dataclass(frozen=True)
class Offer:
    """What a server's `initialize` result says, but the negotiated protocol version."""

    name: str
    instructions: str
    capabilities: dict[str, Any]

    def result(self, requested: str) -> dict[str, Any]:
        from agent_habitat import __version__

        negotiated = (
            requested
            if requested in HANDSHAKE_PROTOCOL_VERSIONS
            else HANDSHAKE_PROTOCOL_VERSIONS[-1]
        )
        return {
            "capabilities": self.capabilities,
            "instructions": self.instructions,
            "protocolVersion": negotiated,
            "serverInfo": {"name": self.name, "version": __version__},
        }


PRIMARY = Offer(
    "agent-habitat",
    PRIMARY_INSTRUCTIONS,
    {
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "tools": {"listChanged": True},
    },
)
TERMINAL = Offer(
    "agent-habitat-terminal", TERMINAL_INSTRUCTIONS, {"logging": {}, "tools": {"listChanged": True}}
)

_CLIENT_INFO_TEXT = ("title", "description", "websiteUrl")


def _plain(value: Any, *, bools: bool = False) -> bool:
    """Objects of objects all the way down (what client capabilities are), `null` allowed."""
    if value is None or (bools and isinstance(value, bool)):
        return True
    return isinstance(value, dict) and all(_plain(v, bools=bools) for v in value.values())


def _ordinary(params: Any) -> str | None:
    """The offered protocol version when these `initialize` params are certainly valid for
    the SDK (and hold no lone surrogate, which it refuses); None when in any doubt."""
    if not isinstance(params, dict) or not set(params) <= {
        "protocolVersion",
        "capabilities",
        "clientInfo",
        "_meta",
    }:
        return None
    version = params.get("protocolVersion")
    capabilities = params.get("capabilities")
    info = params.get("clientInfo")
    if not isinstance(version, str) or not isinstance(capabilities, dict):
        return None
    roots = capabilities.get("roots")
    rest = {k: v for k, v in capabilities.items() if k != "roots"}
    if not (_plain(rest) and (roots is None or _plain(roots, bools=True))):
        return None
    if "_meta" in params and params["_meta"] != {}:
        return None
    if not isinstance(info, dict) or not all(
        isinstance(info.get(key), str) for key in ("name", "version")
    ):
        return None
    if any(
        info.get(key) is not None and not isinstance(info[key], str) for key in _CLIENT_INFO_TEXT
    ):
        return None
    if info.get("icons") is not None:
        return None
    texts = [version, info["name"], info["version"]]
    texts += [info[key] for key in _CLIENT_INFO_TEXT if isinstance(info.get(key), str)]
    if any(_has_lone_surrogate(text) for text in texts):
        return None
    return version


def _has_lone_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def early_answer(line: bytes, offer: Offer) -> tuple[int | str, dict[str, Any]] | None:
    """`(id, response)` for a first line that is an ordinary `initialize` request; else None."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not set(message) <= {"jsonrpc", "id", "method", "params"}:
        return None
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if isinstance(request_id, str) and _has_lone_surrogate(request_id):
        return None
    requested = _ordinary(message.get("params"))
    if requested is None:
        return None
    return request_id, {"jsonrpc": "2.0", "id": request_id, "result": offer.result(requested)}


@dataclass
class Handshake:
    """Reads the client's first line on a thread and answers an ordinary `initialize` at once.

    It reads from and writes to its own duplicates of fds 0 and 1, taken at `start()`, so
    the SDK diverting the standard descriptors later changes nothing here. What it read (the
    first line and whatever came with it) is handed on by `reader()`, in order, before the
    rest of the wire.
    """

    offer: Offer
    _received: bytes = b""
    _answer: tuple[int | str, dict[str, Any]] | None = None
    _done: threading.Event = field(default_factory=threading.Event)
    _pending_duplicate: bool = False

    def start(self, stdin_fd: int = 0, stdout_fd: int = 1) -> Handshake:
        wire_in, wire_out = os.dup(stdin_fd), os.dup(stdout_fd)
        thread = threading.Thread(
            target=self._serve, args=(wire_in, wire_out), name="habitat-handshake", daemon=True
        )
        thread.start()
        return self

    def _serve(self, wire_in: int, wire_out: int) -> None:
        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(wire_in, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if b"\n" in chunk:
                    break
            received = b"".join(chunks)
            line, newline, _ = received.partition(b"\n")
            answer = early_answer(line, self.offer) if newline else None
            if answer is not None:
                data = (json.dumps(answer[1], separators=(",", ":")) + "\n").encode()
                while data:
                    data = data[os.write(wire_out, data) :]
                self._answer = answer
                self._pending_duplicate = True
        except OSError:
            logger.debug("the handshake reader stopped", exc_info=True)
        finally:
            self._received = b"".join(chunks)
            os.close(wire_in)
            os.close(wire_out)
            self._done.set()

    def received(self) -> bytes:
        """What the thread read off the wire, once it is done (blocks until then)."""
        self._done.wait()
        return self._received

    def reader(self, wire: int) -> io.RawIOBase:
        """The client's bytes from the start: what the thread read, then the rest of `wire`."""
        return _Prefixed(self, wire)

    def already_answered(self, message: Any) -> bool:
        """True for the SDK's own answer to the `initialize` answered here (drop it, once)."""
        if not self._pending_duplicate or self._answer is None:
            return False
        request_id, sent = self._answer
        if getattr(message, "id", None) != request_id or not hasattr(message, "model_dump_json"):
            return False
        self._pending_duplicate = False
        own = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
        if own != sent:
            logger.error("the early initialize answer %s differs from the SDK's %s", sent, own)
        return True


class _Prefixed(io.RawIOBase):
    def __init__(self, handshake: Handshake, wire: int) -> None:
        self._handshake = handshake
        self._wire = wire
        self._prefix: bytes | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._prefix is None:
            # A worker thread waits here, as it would on the read itself.
            self._prefix = self._handshake.received()
        view = memoryview(buffer).cast("B")
        if self._prefix:
            n = min(len(view), len(self._prefix))
            view[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = os.read(self._wire, len(view))
        view[: len(data)] = data
        return len(data)
