"""The warm pytest the habitat keeps per workspace for `test.scoped` and `test.full`.

A fresh `python -m pytest` spends a good part of a small run before it reads the project:
starting the interpreter and importing pytest with its own plugins (~0.1 s here, a third
of a one-test run on a small project). A server keeps one interpreter that has done that
(`pytest_zygote/habitat_pytest_zygote.py`, in the project's interpreter) and forks it per
run. It imports nothing else — not the project, its conftests or third-party plugins,
which each run imports for itself as a fresh one would — and it gives each run the
client's working folder, environment, standard streams and `sys.path` as `-m` builds it.
Where it cannot be faithful (an interpreter variable, locale or `sitecustomize` of the
run that differs from its own; a site-packages folder changed since it started) the run
is fresh, and its result says why.

Like the dmypy daemon, it has an owner: the habitat process that started it (the host or
an MCP server; a one-shot `habitat verify` keeps none). The owner stops it when it closes
(`release`); it also ends by itself when its owner is gone or after an idle half hour.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ...proc import ProcessRecord, is_alive, kill_tree, process_create_time, spawn
from ...workspace import Workspace, write_private
from ..command import child_env
from ..environments import ProjectEnv

if TYPE_CHECKING:
    from .context import RungContext

__all__ = [
    "CLIENT",
    "IDLE_TIMEOUT_S",
    "ZYGOTE",
    "WarmPytest",
    "begin_early",
    "drop_early",
    "ensure",
    "for_rung",
    "release",
    "run_note",
    "worth_prestarting",
]

_HERE = Path(__file__).resolve().parent.parent / "pytest_zygote"
ZYGOTE = _HERE / "habitat_pytest_zygote.py"
CLIENT = _HERE / "habitat_pytest_client.py"
IDLE_TIMEOUT_S = 1800
START_TIMEOUT_S = 30.0
_READY = "warm pytest ready"
_POLL_S = 0.02
# (interpreter, root) → why a warm pytest could not start there, for this process's life:
# a verify does not pay a failing start each time.
_failed: dict[tuple[str, str], str] = {}
# One start at a time per workspace in this process (a start stops the one before).
_starting: dict[Path, anyio.Lock] = {}


@functools.cache
def _scripts_digest() -> str:
    """Of the zygote and the client: a habitat upgraded under a running warm pytest does not
    talk to it with another protocol."""
    digest = hashlib.sha256()
    for path in (ZYGOTE, CLIENT):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


EXITED_AT_START = "the warm pytest exited at start: "
STAYS_FRESH = "its test runs stay fresh"
"""How the zygote says it would not be faithful (pytest imports the project at start-up):
the zygote runs in the project's interpreter and imports nothing of ours, so the words are
the contract (tests/verify check both sides)."""


@dataclass(frozen=True)
class _Spawned:
    """A zygote started and not yet waited for."""

    record: ProcessRecord
    address: str
    python: str
    root: str
    env: dict[str, str]

    def serves(self, env: ProjectEnv, root: Path, clean: dict[str, str]) -> bool:
        return (self.python, self.root, self.env) == (
            str(env.python),
            str(root),
            clean,
        ) and is_alive(self.record)


_early: dict[Path, _Spawned] = {}
"""Zygotes this process began before its climb knew it would want them (`begin_early`), by
folder: the climb's `start` of the same folder takes one over; `drop_early` stops the rest."""


def own_folder() -> str:
    """The folder of a one-shot climb's own warm pytest: this process's."""
    return f"pytest-warm-{os.getpid()}"


def begin_early(workspace: Workspace, python: Path, root: Path) -> bool:
    """Blocking: begin a one-shot climb's warm pytest (in its own folder, as
    `worth_prestarting` names it) before this process has imported the ladder, so that the
    interpreter's start and pytest's imports run while it does (1-2 s of wall on a loaded
    machine). The climb takes it over when it wants a warm pytest there for the same
    interpreter, root and environment; otherwise `drop_early` stops it. A start that fails
    is the climb's to find and say; whether one was begun."""
    warm = WarmPytest(workspace, own_folder())
    try:
        _early[warm.dir] = warm.spawn(python, root, child_env(None, python.parent))
    except OSError:
        return False
    return True


async def drop_early(workspace: Workspace | None = None) -> None:
    """Stop the zygotes begun early (for `workspace`'s climbs; None: any) that no climb took
    over."""
    with anyio.CancelScope(shield=True):
        for folder in list(_early):
            if workspace is None or folder.parent == workspace.state_dir:
                early = _early.pop(folder, None)
                if early is not None:
                    await kill_tree(early.record, grace=1.0)


class WarmPytest:
    def __init__(self, workspace: Workspace, folder: str = "pytest-warm") -> None:
        # `folder`: the workspace's shared one, or a one-shot climb's own (ladder.py).
        self.dir = workspace.state_dir / folder
        self.status_file = self.dir / "status.json"
        self.log_file = self.dir / "zygote.log"

    def status(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.status_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def record(self) -> ProcessRecord | None:
        """The live warm pytest, if there is one."""
        data = self.status()
        if data is None:
            return None
        record = ProcessRecord(int(data["pid"]), float(data["create_time"]))
        return record if is_alive(record) else None

    def usable(self, env: ProjectEnv, root: Path) -> bool:
        data = self.status()
        return (
            data is not None
            and data.get("python") == str(env.python)
            and data.get("root") == str(root)
            and data.get("scripts") == _scripts_digest()
            and self.record() is not None
        )

    def wrap(self, argv: list[str], report: Path) -> list[str]:
        """`argv` (`python -m pytest …`) run through the warm pytest; the client execs
        `argv` itself when the warm one cannot run it."""
        data = self.status() or {}
        address = str(data.get("address", "none"))
        return [argv[0], "-I", "-S", str(CLIENT), address, str(report), "--", *argv]

    def spawn(self, python: Path, root: Path, process_env: dict[str, str]) -> _Spawned:
        """Blocking: the zygote started for `python` in `root`, not yet waited for; OSError
        when it could not start."""
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        address = f"agent-habitat-pytest-{secrets.token_hex(8)}"
        argv = [str(python), str(ZYGOTE), address, str(root)]
        argv += [str(IDLE_TIMEOUT_S), str(os.getpid())]
        # PYTHONPATH is each run's own: the test process puts it on its path as a fresh
        # interpreter would, so the warm one starts without.
        clean = {k: v for k, v in process_env.items() if k != "PYTHONPATH"}
        self.log_file.unlink(missing_ok=True)
        sup = spawn(
            argv,
            cwd=root,
            env=clean,
            output=self.log_file,
            marker=f"pytest-warm-{secrets.token_hex(4)}",
        )
        return _Spawned(sup.record, address, str(python), str(root), clean)

    async def start(self, env: ProjectEnv, root: Path, process_env: dict[str, str]) -> str | None:
        """Start one for `env` in `root` (stopping one for another interpreter or root);
        None once it serves, else why it could not. One this process began early for the
        same interpreter, root and environment (`begin_early`) is waited for instead."""
        await self.stop_now()
        clean = {k: v for k, v in process_env.items() if k != "PYTHONPATH"}
        early = _early.pop(self.dir, None)
        if early is not None and not early.serves(env, root, clean):
            with anyio.CancelScope(shield=True):
                await kill_tree(early.record, grace=1.0)
            early = None
        if early is None:
            try:
                early = self.spawn(env.python, root, process_env)
            except OSError as exc:
                return f"could not start {env.python}: {exc}"
        try:
            return await self._wait_ready(early.record, early.address, env, root)
        except BaseException:
            # Cancelled mid-start (a one-shot climb ended first): not left running.
            with anyio.CancelScope(shield=True):
                await kill_tree(early.record, grace=1.0)
            raise

    async def _wait_ready(
        self, record: ProcessRecord, address: str, env: ProjectEnv, root: Path
    ) -> str | None:
        with anyio.move_on_after(START_TIMEOUT_S):
            while True:  # its log says when it serves; bounded by START_TIMEOUT_S
                text = await anyio.Path(self.log_file).read_text(encoding="utf-8", errors="replace")
                if _READY in text:
                    write_private(
                        self.status_file,
                        json.dumps(
                            {
                                "pid": record.pid,
                                "create_time": record.create_time,
                                "address": address,
                                "python": str(env.python),
                                "root": str(root),
                                "scripts": _scripts_digest(),
                                "owner": os.getpid(),
                                "owner_create_time": process_create_time(os.getpid()) or 0.0,
                                "started_at": time.time(),
                            }
                        ),
                    )
                    return None
                if not is_alive(record):
                    last = text.strip().splitlines()[-1:] or ["no output"]
                    return f"{EXITED_AT_START}{last[0][:300]}"
                await anyio.sleep(_POLL_S)
        await kill_tree(record, grace=1.0)
        return f"the warm pytest did not start within {START_TIMEOUT_S:.0f} s"

    async def stop_now(self) -> None:
        record = self.record()
        if record is not None:
            await kill_tree(record, grace=2.0)
        self.status_file.unlink(missing_ok=True)

    def owned_here(self) -> bool:
        data = self.status() or {}
        return data.get("owner") == os.getpid()

    def orphaned(self) -> bool:
        """Its owner (the habitat process that started it) is gone: killed before it could
        stop it."""
        data = self.status() or {}
        try:
            owner = ProcessRecord(int(data["owner"]), float(data.get("owner_create_time", 0.0)))
        except (KeyError, TypeError, ValueError):
            return True
        return not is_alive(owner)

    def describe(self) -> str | None:
        """One line for `habitat status`, None when there is none."""
        record = self.record()
        if record is None:
            return None
        data = self.status() or {}
        return f"warm: pytest pid {record.pid} for {data.get('python')} (forked per test run)\n"


async def for_rung(ctx: RungContext) -> tuple[WarmPytest | None, str | None]:
    """The warm pytest a test rung runs through, or None and why not (None: nothing to say).
    A server starts one when it has none; a one-shot climb uses one only if a server left
    it running."""
    env = ctx.env
    if env is None or not ctx.config.warm_pytest:
        return None, None
    if ctx.policy == "ci_parity":
        return None, "the ci_parity policy runs pytest as CI does, in a fresh interpreter"
    warm = WarmPytest(ctx.workspace)
    if await anyio.to_thread.run_sync(warm.usable, env, ctx.root):
        return warm, None
    if ctx.prestarted_pytest is not None:
        warm = ctx.prestarted_pytest
    elif ctx.hooks is None:
        return None, None
    why = await ensure(warm, env, ctx.root, ctx.process_env())
    return (warm, None) if why is None else (None, why)


def worth_prestarting(ctx: RungContext) -> WarmPytest | None:
    """The warm pytest a one-shot climb should start beside its first rungs, or None: a test
    rung is to come with tests to run (not a `test.scoped` whose selection is empty: the
    start would take the cores the lint and the type check need, for nothing) and the
    workspace's shared one (a host's) cannot serve it. It is the climb's own, in a folder
    of this process's: a second one-shot of the workspace, or a host, never stops it, nor
    it theirs."""
    if ctx.keeps_warm or not _tests_coming(ctx):
        return None
    return WarmPytest(ctx.workspace, own_folder())


def worth_warming(ctx: RungContext) -> WarmPytest | None:
    """The workspace's shared warm pytest, for a server's climb to start beside its first
    rungs, or None: as `worth_prestarting`, where no warm pytest serves the workspace yet
    (the warm-up's start waits until verify is quiet; the test rung would otherwise start
    it only once it comes, after the lint and the type check). Kept after the climb."""
    if not ctx.keeps_warm or ctx.hooks is None or not _tests_coming(ctx):
        return None
    return WarmPytest(ctx.workspace)


def _tests_coming(ctx: RungContext) -> bool:
    """A test rung is to come with tests to run (not a `test.scoped` whose selection is
    empty: a start would take the cores the lint and the type check need, for nothing),
    through a warm pytest, and the workspace's shared one cannot serve it yet."""
    env = ctx.env
    selection = ctx.selection
    tests_to_run = "test.full" in ctx.rungs or (
        "test.scoped" in ctx.rungs and (selection.full or bool(selection.tests))
    )
    return not (
        env is None
        or not env.has("pytest")
        or not ctx.config.warm_pytest
        or ctx.policy == "ci_parity"
        or not tests_to_run
        or WarmPytest(ctx.workspace).usable(env, ctx.root)
    )


async def ensure(
    warm: WarmPytest, env: ProjectEnv, root: Path, process_env: dict[str, str]
) -> str | None:
    """Start the workspace's warm pytest for `env` in `root` unless one serves already;
    None once one does, else why not (remembered for this process's life)."""
    key = (str(env.python), str(root))
    async with _starting.setdefault(warm.dir, anyio.Lock()):
        if key in _failed:
            return _failed[key]
        if await anyio.to_thread.run_sync(warm.usable, env, root):
            return None
        why = await warm.start(env, root, process_env)
        if why is not None:
            _failed[key] = why
        return why


def run_note(report: Path) -> str:
    """What the client said about the run: warm (forked) or fresh, and why."""
    try:
        text = report.read_text(encoding="utf-8").strip()
    except OSError:
        return "pytest ran fresh"
    finally:
        with contextlib.suppress(OSError):
            report.unlink()
    if text.startswith("warm:"):
        return f"pytest forked from the warm pytest ({text[5:].strip()})"
    return "pytest ran fresh: " + text.removeprefix("fresh:").strip()


async def release(workspace: Workspace) -> bool:
    """At the close of a habitat process: stop the warm pytest it started. True if it did."""
    warm = WarmPytest(workspace)
    if not warm.status_file.exists() or not warm.owned_here():
        return False
    await warm.stop_now()
    return True
