"""A type checker kept warm as a language server: basedpyright or pyright
(`<name>-langserver --stdio`) and ty (`ty server`), for `compile.project`.

A cold `basedpyright` run reads and binds the whole program on every verify (1.3–4.3 s on a
small project, ~8 s on packaging); its language server keeps that and re-checks what a
change reaches. Each check opens the rung's targets with their text on disk (an open one
that changed gets `didChange`; open documents stay open, kept equal to the disk), tells the
server about every other file of the change (`workspace/didChangeWatchedFiles`; it watches
nothing itself, so nothing races the check), and pulls each target's diagnostics. They are
written in the shape of the tool's own CLI output and parsed by the same parser, so a warm
finding and a cold one compare equal (tests/e2e/test_warm_checker.py checks it on a real
project; bench/ladder/ladder_harness_checkers.py on packaging).

A server answers for one configuration: a change of HEAD, of a configuration file, of the
interpreter or of the tool starts a new one. A server that fails or dies mid-check is
stopped and the rung runs the CLI cold, saying so.

Like the dmypy daemon, it has an owner: the habitat process that started it (a server —
the host or an MCP server — from its warm-up or first verify; a one-shot `habitat verify`
runs the CLI cold). It lives on the owner's pipes, so it cannot outlive it: the owner stops
it when it closes (`release`), and the server exits when its stdin closes or the owner's pid
dies (`processId`). `habitat status` lists it from its status file.

A start the warm-up makes runs at background priority (`background=True`: its session's
autogroup lowered until it answered `initialize`), and is announced before it begins
(`announce`): a verify that comes meanwhile does not wait for it, it runs the tool cold
beside it and takes the first answer (toolchains/node/race.py); the first request after a
project opens costs what the tool by hand costs, not the warm-up (issue 27). That verify
also makes the start the user's (`hurry`): its priority is put back (or it begins at normal
priority, if it has not begun), since the next verify waits on it. At background priority
on a loaded machine the start could outlast every verify: defu's warm tsc took 167 s to its
first answer at load 18 (a cold tsc 13-20 s), so all four verifies of a run paid the cold
tsc.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ...proc import ProcessRecord, is_alive, kill_tree, process_create_time
from ...proc.priority import background_for_now
from ...workspace import Workspace, private_dirs, write_private
from .checker_files import CONFIG_FILES
from .lsp import LspClient, LspError
from .warm_records import STATUS_DIR, describe, live, statuses

__all__ = [
    "BACKGROUND_NICE",
    "Make",
    "ServerSpec",
    "WarmChecker",
    "announce",
    "announced",
    "describe",
    "failed",
    "get",
    "hurry",
    "live",
    "release",
    "start",
]

START_TIMEOUT_S = 60.0
START_BOUND = 10
"""A start's whole wait for `initialize`, in `START_TIMEOUT_S`s, at whatever priority."""
BACKGROUND_NICE = 10
"""The nice of a warm-up's start while it starts (`background=True`)."""
_EXTRA_CONFIG = ("ty.toml", "pyrefly.toml")
# One server per workspace and slot in this process (the Python checker, each Node
# workspace's tsc and eslint); the slot's lock makes one start or check at a time.
_servers: dict[tuple[Path, str], WarmChecker] = {}
_locks: dict[tuple[Path, str], anyio.Lock] = {}
# Starts the warm-up announced and has not ended: set when each ends, however it ended.
_announced: dict[tuple[Path, str], anyio.Event] = {}
# Starts under way, and slots whose start a verify asked for before it began (`hurry`).
_starting: dict[tuple[Path, str], WarmChecker] = {}
_hurried: set[tuple[Path, str]] = set()


@dataclass(frozen=True)
class ServerSpec:
    tool: str
    """`basedpyright`, `pyright` or `ty`: what the rung reports as its tool."""
    argv: list[str]
    env: dict[str, str]
    settings: dict[str, Any] = field(default_factory=dict)
    """`workspace/configuration` answers by section; others get null."""
    slot: str = "python"
    """Which of the workspace's warm checkers this is: one server per slot."""
    config_files: tuple[str, ...] = ()
    """More files (relative to the root) whose content the server's answers depend on."""
    kind: str = "language server"
    """What `habitat status` calls it."""


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def config_key(root: Path, head: str, spec: ServerSpec) -> str:
    """What a server's answers depend on besides the files it is told about."""
    parts = [str(root), head, spec.tool, *spec.argv, json.dumps(spec.settings, sort_keys=True)]
    parts += [f"{k}={v}" for k, v in sorted(spec.env.items()) if k in ("VIRTUAL_ENV", "PATH")]
    names = (*CONFIG_FILES, *_EXTRA_CONFIG, *spec.config_files)
    parts += [f"{n}:{_digest(root / n)}" for n in names]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


class WarmChecker:
    """One language server of one workspace, owned by this process."""

    def __init__(self, workspace: Workspace, root: Path, spec: ServerSpec, key: str) -> None:
        self.root, self.spec, self.key = root, spec, key
        self.dir = workspace.state_dir / STATUS_DIR
        slot = (
            ""
            if spec.slot == "python"
            else "-" + hashlib.sha256(spec.slot.encode()).hexdigest()[:8]
        )
        self.status_file = self.dir / f"{os.getpid()}{slot}.json"
        self.client: LspClient | None = None
        self.record: ProcessRecord | None = None
        self._opened: dict[str, tuple[int, str]] = {}  # rel → (version, digest) sent
        self._told: dict[str, str | None] = {}  # rel → digest the server was told of
        self._guard = threading.Lock()
        self.checks = 0
        self.background = False
        """Started by the warm-up: at background priority until it answered `initialize`."""
        self.priority = ""
        """What `background` applied (`autogroup nice 10 while it starts`), else empty."""
        self._put_back: Callable[[], None] = lambda: None
        self.hurried = False
        """A verify asked for it while it started: background no more (`hurry`)."""

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def spawn(self, log: str, settings: Callable[[str | None], Any]) -> LspClient:
        """The server's process, in the 0700 state folder's log, at background priority when
        the warm-up starts it (blocking); `started` ends that once it answered."""
        private_dirs(self.dir)
        client = LspClient(
            self.spec.argv, cwd=self.root, env=self.spec.env, log=self.dir / log, settings=settings
        )
        self.client = client
        self.record = ProcessRecord(client.proc.pid, process_create_time(client.proc.pid) or 0.0)
        # Recorded from its spawn, not its answer: a host stopped (or killed) while the start
        # runs still finds it (`release`), where a node tsc's first check outlived the host.
        self.write_status(starting=True)
        with self._guard:
            if self.background and not self.hurried:
                self.priority, self._put_back = background_for_now(client.proc.pid, BACKGROUND_NICE)
        return client

    def hurry(self) -> str:
        """A verify waits on this start: its priority back where it was, when it can be;
        what was done."""
        with self._guard:
            if self.hurried or not self.background:
                return ""
            self.hurried = True
            self._put_back()
            if self.priority.endswith("while it starts"):
                self.priority += ", put back when a verify asked for it"
                return "put back to normal priority"
            if self.priority:
                return f"left at {self.priority}"
            return "begins at normal priority"

    def initialize(self, client: LspClient, params: Any, timeout: float) -> Any:
        """`initialize`'s answer (blocking). The seconds the start spends at background
        priority do not count against `timeout`: there it gets what the user's work leaves,
        and a start starved by it is slow, not stuck (destr 2.0.5, a new user's trial at load
        ~25: the warm eslint's start, 2 CPU-seconds, got no answer in 60 s at autogroup nice
        10, and every verify until one started it again linted cold). Only what it spends
        at its normal priority (once a verify hurried it, or where nothing was lowered)
        counts; `START_BOUND` times `timeout` caps the whole wait."""

        def counts() -> bool:
            with self._guard:
                return not (self.background and self.priority and not self.hurried)

        started = client.start_request("initialize", params)
        return client.wait(
            started, "initialize", timeout, counts=counts, bound=START_BOUND * timeout
        )

    def started(self) -> None:
        """It answered `initialize`: it answers requests at the priority it had before."""
        self._put_back()
        self.write_status()

    def start(self) -> None:
        """Spawn and initialize (blocking); raises LspError or OSError."""
        settings = self.spec.settings

        def answer(section: str | None) -> Any:
            return settings.get(section or "", None)

        client = self.spawn("server.log", answer)
        folder = {"uri": self.root.as_uri(), "name": self.root.name}
        capabilities = {
            "workspace": {
                "configuration": True,
                "workspaceFolders": True,
                # Claimed so the server leaves watching to us: every change reaches it from
                # `check`, before the diagnostics are asked for.
                "didChangeWatchedFiles": {"dynamicRegistration": True},
            },
            "textDocument": {
                "synchronization": {"didSave": False, "dynamicRegistration": False},
                "publishDiagnostics": {"versionSupport": True},
                "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
            },
        }
        self.initialize(
            client,
            {
                "processId": os.getpid(),
                "rootUri": self.root.as_uri(),
                "rootPath": str(self.root),
                "workspaceFolders": [folder],
                "capabilities": capabilities,
                "initializationOptions": settings.get("$init", {}),
            },
            START_TIMEOUT_S,
        )
        client.notify("initialized", {})
        self.started()

    def write_status(self, *, starting: bool = False) -> None:
        assert self.record is not None
        write_private(
            self.status_file,
            json.dumps(
                {
                    "pid": self.record.pid,
                    "create_time": self.record.create_time,
                    "tool": self.spec.tool,
                    "kind": self.spec.kind,
                    "argv": self.spec.argv,
                    "owner": os.getpid(),
                    "owner_create_time": process_create_time(os.getpid()) or 0.0,
                    "root": str(self.root),
                    "started_at": time.time(),
                    "starting": starting,
                }
            ),
        )

    def check(
        self, targets: list[str], touched: list[str], timeout: float
    ) -> dict[str, list[dict[str, Any]]]:
        """Each target's diagnostics for the files as they are on disk now (blocking)."""
        client = self.client
        assert client is not None
        with self._guard:
            self._sync(client, targets, touched)
            method = "textDocument/diagnostic"
            asked = [
                (rel, client.start_request(method, {"textDocument": {"uri": self.uri(rel)}}))
                for rel in targets
            ]
            out: dict[str, list[dict[str, Any]]] = {}
            deadline = time.monotonic() + timeout
            for rel, pending in asked:
                left = max(0.1, deadline - time.monotonic())
                report = client.wait(pending, method, left) or {}
                out[rel] = list(report.get("items") or [])
            self.checks += 1
            return out

    def _sync(self, client: LspClient, targets: list[str], touched: list[str]) -> None:
        # Documents stay open once opened, their text kept equal to the disk's: closing one
        # makes pyright re-read it and re-check everything that imports it (seen on
        # packaging: a verify whose affected set shrank paid seconds for that).
        gone = [r for r in self._opened if not (self.root / r).is_file()]
        for rel in gone:
            client.notify("textDocument/didClose", {"textDocument": {"uri": self.uri(rel)}})
            del self._opened[rel]
        changes = [{"uri": self.uri(rel), "type": 3} for rel in gone]
        keep = set(targets) | set(self._opened)
        python = {r for r in touched if r.endswith((".py", ".pyi"))}
        for rel in sorted((python | set(self._told)) - keep):
            digest = _digest(self.root / rel)
            if rel in self._told and self._told[rel] == digest:
                continue
            kind = 3 if digest is None else 2  # deleted, changed (created reads as changed)
            changes.append({"uri": self.uri(rel), "type": kind})
            self._told[rel] = digest
        if changes:
            client.notify("workspace/didChangeWatchedFiles", {"changes": changes})
        for rel in sorted(keep - set(gone)):
            self._send_text(client, rel)

    def _send_text(self, client: LspClient, rel: str) -> None:
        data = (self.root / rel).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        sent = self._opened.get(rel)
        if sent is not None and sent[1] == digest:
            return
        text = data.decode("utf-8", "replace")
        uri = self.uri(rel)
        self._told.pop(rel, None)  # open now: its text is what the server uses
        if sent is None:
            doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
            client.notify("textDocument/didOpen", {"textDocument": doc})
            self._opened[rel] = (1, digest)
            return
        version = sent[0] + 1
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )
        self._opened[rel] = (version, digest)

    def alive(self) -> bool:
        return (
            self.client is not None
            and self.client.closed is None
            and self.record is not None
            and is_alive(self.record)
        )

    async def stop(self) -> None:
        client, record = self.client, self.record
        self.client = None
        if client is not None:
            await anyio.to_thread.run_sync(client.close)
        if record is not None:
            # Even when the server has ended (closing its stdin ends the Node ones), what it
            # started may live on in its session: jest's workers, running a test the verify
            # stopped, outlived the warm jest whenever it exited before this looked (a
            # loaded fresh-clone CI at f66e067). kill_tree finds them by the session.
            await kill_tree(record, grace=2.0)
        if client is not None:
            await anyio.to_thread.run_sync(client.reap)
        self.status_file.unlink(missing_ok=True)


Make = Callable[[Workspace, Path, ServerSpec, str], WarmChecker]
"""Builds a warm checker (`WarmChecker`, or a subclass that speaks another protocol)."""


async def get(
    workspace: Workspace,
    root: Path,
    spec: ServerSpec,
    head: str,
    *,
    may_start: bool,
    make: Make | None = None,
    background: bool = False,
) -> tuple[WarmChecker | None, str | None]:
    """This process's warm server for `spec`'s slot, started when `may_start` and there is
    none (or the one there answers for another configuration, or died); and what to say
    about it. `make` builds a checker of another kind than a language server; `background`
    starts it at background priority (the warm-up's)."""
    key = await anyio.to_thread.run_sync(config_key, root, head, spec)
    slot = (workspace.state_dir, spec.slot)
    async with _locks.setdefault(slot, anyio.Lock()):
        warm = _servers.get(slot)
        said = None
        if warm is not None and (warm.key != key or not warm.alive()):
            said = (
                f"the warm {warm.spec.tool} {warm.spec.kind} had exited; started again"
                if not warm.alive()
                else f"HEAD, the configuration or the checker changed; {spec.tool}'s "
                f"{spec.kind} started again"
            )
            await _drop(slot)
            warm = None
        if warm is not None:
            return warm, None
        if not may_start:
            return None, None
        return await start(workspace, root, spec, key, said, make=make, background=background)


def announce(workspace: Workspace, slot: str) -> None:
    """The warm-up will start `slot`'s server: until that start ends (`settle`), a check
    races the tool's cold run against it (`announced`) instead of waiting for it."""
    _announced.setdefault((workspace.state_dir, slot), anyio.Event())


def announced(workspace: Workspace, slot: str) -> anyio.Event | None:
    """The event set once the announced start of `slot`'s server ended; None when there is
    no such start to come."""
    return _announced.get((workspace.state_dir, slot))


def hurry(workspace: Workspace, slot: str) -> str:
    """A verify waits on the announced start of `slot`'s server: that start is the user's
    now. Under way, its priority is put back (where autogroups allow it); not begun yet,
    it begins at normal priority. What was done, for the rung's notes."""
    key = (workspace.state_dir, slot)
    warm = _starting.get(key)
    if warm is not None:
        return warm.hurry()
    if key in _announced:
        _hurried.add(key)
        return "will begin at normal priority"
    return ""


def settle(workspace: Workspace, slot: str) -> None:
    """The announced start of `slot`'s server ended, or will not happen."""
    _hurried.discard((workspace.state_dir, slot))
    event = _announced.pop((workspace.state_dir, slot), None)
    if event is not None:
        event.set()


async def start(
    workspace: Workspace,
    root: Path,
    spec: ServerSpec,
    key: str,
    said: str | None = None,
    *,
    make: Make | None = None,
    background: bool = False,
) -> tuple[WarmChecker | None, str | None]:
    warm = (make or WarmChecker)(workspace, root, spec, key)
    slot = (workspace.state_dir, spec.slot)
    warm.background = background and slot not in _hurried
    _hurried.discard(slot)
    _starting[slot] = warm
    try:
        await anyio.to_thread.run_sync(warm.start, abandon_on_cancel=False)
    except (LspError, OSError) as exc:
        await warm.stop()
        return None, f"{spec.tool}'s {spec.kind} did not start ({exc}); ran the CLI cold"
    finally:
        _starting.pop(slot, None)
        settle(workspace, spec.slot)
    _servers[slot] = warm
    pid = warm.record.pid if warm.record else "?"
    how = f", {warm.priority}" if warm.priority else ""
    return warm, said or f"{spec.tool}'s {spec.kind} started (pid {pid}{how})"


async def _drop(slot: tuple[Path, str]) -> None:
    warm = _servers.pop(slot, None)
    if warm is not None:
        await warm.stop()


async def failed(workspace: Workspace, slot: str = "python") -> None:
    """A check on the server failed: stop it, so the next verify starts a fresh one."""
    async with _locks.setdefault((workspace.state_dir, slot), anyio.Lock()):
        await _drop((workspace.state_dir, slot))


async def release(workspace: Workspace) -> bool:
    """At the close of a habitat process: stop the server it owns, and any left by an owner
    that died. True when one was stopped."""
    stopped = False
    for slot in [k for k in _servers if k[0] == workspace.state_dir]:
        await _drop(slot)
        stopped = True
    for warm in [w for k, w in _starting.items() if k[0] == workspace.state_dir]:
        # A start under way (its thread waits for `initialize`): its server and what that
        # started go now; the start then fails and says so (`start`'s LspError path).
        await warm.stop()
        stopped = True
    for data, path in statuses(workspace):
        owner = ProcessRecord(int(data.get("owner", 0)), float(data.get("owner_create_time", 0)))
        if is_alive(owner):
            continue
        record = ProcessRecord(int(data["pid"]), float(data["create_time"]))
        if is_alive(record):
            await kill_tree(record, grace=2.0)
            stopped = True
        path.unlink(missing_ok=True)
    return stopped
