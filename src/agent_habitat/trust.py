"""Workspace trust: nothing of a project runs until its user trusts it.

Opening a repository must not run its code. The ladder runs project-controlled programs —
the interpreter `[tool.habitat.ladder] python` names, a committed `.venv/bin/python`,
`[tool.mypy] plugins` inside the warm dmypy, conftests inside the warm pytest, build
backends, configured commands — so the warm-up, which would start them when a project
opens, waits until the project is trusted. A project becomes trusted by a person's act:
`habitat trust`, the `project_trust` verb (over MCP a person confirms it: see
mcp_tools/confirm.py; the `/project_trust` prompt is a person's own act), or the first
verify the user asks for (that request is the user asking for the project's code to run).

Trust is kept in the project's own state folder (`trust.json`, 0600), keyed by the folder
*and* what checkout sits there, so a different checkout at the same path does not inherit
it: the folder's and its `.git`'s device and inode, and the repository's root commits
(inode numbers are reused after a delete; a different repository has other root commits).
A repository whose first commit came after the trust keeps it: an empty history matches
any. Deleting the file takes it back.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Literal

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .events import EventBus
from .trust_check import FILE, NOT_TRUSTED, identity_of, not_trusted, same_checkout
from .workspace import Workspace, scm_root, write_private

__all__ = [
    "NOT_TRUSTED",
    "CheckoutIdentity",
    "ProjectTrust",
    "TrustArgs",
    "TrustHow",
    "TrustResult",
    "TrustState",
    "checkout_identity",
]

logger = logging.getLogger(__name__)

_FILE = FILE
_POLL_SECONDS = 1.0
"""How often a waiting warm-up looks at the file (another process may trust the project)."""

TrustHow = Literal["verb", "prompt", "verify"]
"""`verb`: `habitat trust`, the HTTP API or a confirmed MCP call; `prompt`: /project_trust;
`verify`: a verify the user asked for."""


class _Model(BaseModel):
    # Built on first use (validator, serializer), not at import: most commands never use
    # these, and every shell command imports them with the verb table.
    model_config = ConfigDict(defer_build=True)


class CheckoutIdentity(_Model):
    """What checkout sits at a path."""

    root: str
    device: int
    inode: int
    git_device: int | None = None
    git_inode: int | None = None
    root_commits: list[str] = Field(default_factory=list)

    def same_checkout(self, other: CheckoutIdentity) -> bool:
        return same_checkout(vars(self), vars(other))


class _Entry(_Model):
    identity: CheckoutIdentity
    trusted_at: float
    how: TrustHow


class _File(_Model):
    model_config = ConfigDict(extra="ignore")
    roots: dict[str, _Entry] = Field(default_factory=dict)


class TrustArgs(_Model):
    """No arguments: the open project is the one trusted (the CLI's `--project` opens it)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class TrustState(_Model):
    """Whether the project's code may run, for scenes and status."""

    trusted: bool
    summary: str
    how: TrustHow | None = None
    trusted_at: float | None = None


class TrustResult(_Model):
    """`project_trust`: the project is trusted from now on."""

    root: str
    already: bool
    """It was trusted before this call."""
    summary: str


def checkout_identity(root: Path) -> CheckoutIdentity:
    """The identity of the checkout at `root` (runs git, never the project's code)."""
    return CheckoutIdentity.model_validate(identity_of(root))


def _stat(path: Path, whole: bool = True) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if whole else (st.st_dev, st.st_ino)


def _history_key(root: Path, trust_file: Path) -> tuple[object, ...] | None:
    """What changes whenever the checkout's identity or its trust entry could: the folder's
    and its `.git`'s inodes, `trust.json`, and every file that names HEAD's commit (whose
    root commits are fixed): `.git/HEAD`, the ref it names, `packed-refs`, the reftable's
    list, replacements and grafts. None where git keeps them elsewhere (a linked worktree's
    or a submodule's `.git` file): the identity is then read whole."""
    top = scm_root(root)
    git = top / ".git" if top is not None else None
    if git is None or not git.is_dir():
        return None
    try:
        head = (git / "HEAD").read_bytes()
    except OSError:
        return None
    ref = head[5:].strip().decode("utf-8", "replace") if head.startswith(b"ref: ") else None
    return (
        _stat(root, whole=False),
        _stat(git, whole=False),
        _stat(trust_file),
        head,
        _stat(git / ref) if ref else None,
        *(_stat(git / name) for name in ("packed-refs", "reftable/tables.list", "info/grafts")),
        _stat(git / "refs" / "replace"),
    )


class ProjectTrust:
    """Reads and grants the trust of projects (each in its own state folder)."""

    def __init__(self, bus: EventBus | None = None) -> None:
        self.bus = bus
        self._granted = anyio.Event()
        self._known: dict[Path, tuple[tuple[object, ...], str]] = {}
        """root → (`_history_key` when it was last found trusted, what the grant said): a
        verify's grant then costs a few `stat`s, not the `git rev-list` of
        `checkout_identity` (a process on the way to every verify's start)."""

    @staticmethod
    def _path(root: Path) -> Path:
        return Workspace.for_project(root).state_dir / _FILE

    def _read(self, root: Path) -> _File:
        try:
            text = self._path(root).read_text(encoding="utf-8")
        except FileNotFoundError:
            return _File()
        try:
            return _File.model_validate_json(text)
        except ValidationError as exc:
            logger.warning("ignoring unreadable %s: %s", self._path(root), exc)
            return _File()

    def _entry(self, root: Path, identity: CheckoutIdentity) -> _Entry | None:
        entry = self._read(root).roots.get(str(root))
        if entry is None or not entry.identity.same_checkout(identity):
            return None
        return entry

    def state_sync(self, root: Path) -> TrustState:
        entry = self._entry(root, checkout_identity(root))
        if entry is None:
            return TrustState(trusted=False, summary=not_trusted(root))
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.trusted_at))
        return TrustState(
            trusted=True,
            summary=f"trusted ({entry.how}, {when})",
            how=entry.how,
            trusted_at=entry.trusted_at,
        )

    async def state(self, root: Path) -> TrustState:
        return await anyio.to_thread.run_sync(self.state_sync, root)

    async def trusted(self, root: Path) -> bool:
        return (await self.state(root)).trusted

    def grant_sync(self, root: Path, how: TrustHow) -> TrustResult:
        path = self._path(root)
        key = _history_key(root, path)
        known = self._known.get(root)
        if key is not None and known is not None and known[0] == key:
            return TrustResult(root=str(root), already=True, summary=known[1])
        identity = checkout_identity(root)
        entry = self._entry(root, identity)
        if entry is not None:
            summary = f"{root} was already trusted ({entry.how})"
            if key is not None:
                self._known[root] = (key, summary)
            return TrustResult(root=str(root), already=True, summary=summary)
        data = self._read(root)
        data.roots[str(root)] = _Entry(identity=identity, trusted_at=time.time(), how=how)
        write_private(path, data.model_dump_json(indent=1))
        return TrustResult(
            root=str(root),
            already=False,
            summary=f"trusted {root}: its code may run now (the warm-up starts)",
        )

    async def grant(self, root: Path, how: TrustHow) -> TrustResult:
        """Trust the checkout at `root` from now on (kept in its state folder)."""
        result = await anyio.to_thread.run_sync(self.grant_sync, root, how)
        if not result.already:
            if self.bus is not None:
                self.bus.publish("project.trusted", data={"root": result.root, "how": how})
            self._granted.set()
            self._granted = anyio.Event()
        return result

    async def wait(self, root: Path) -> None:
        """Return once `root` is trusted: granted here, or in another process (the file)."""
        identity = await anyio.to_thread.run_sync(checkout_identity, root)
        path = self._path(root)
        seen: tuple[float, int] | None = None
        while True:
            try:
                st = path.stat()
                now: tuple[float, int] | None = (st.st_mtime, st.st_size)
            except FileNotFoundError:
                now = None
            if now != seen:
                seen = now
                if await anyio.to_thread.run_sync(self._entry, root, identity) is not None:
                    return
            granted = self._granted
            with anyio.move_on_after(_POLL_SECONDS):
                await granted.wait()
