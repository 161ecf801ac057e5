"""A one-shot verify's plain mypy begun as the process starts, over the whole package.

A one-shot `habitat verify` (no host, so no dmypy daemon) type-checks with a plain mypy over
the workspace's incremental cache, cold on a project's first verify (isodate: ~1 s of CPU,
most of it the standard library; 5-11 s of wall on a loaded machine, longer than the
project's whole test suite). Begun by the climb, it started only after the process's
imports, the workspace's state, the snapshot and the selection (2-3.6 s of wall at load 33),
so the type check queued behind them while the test process (begun early,
`early_pytest.py`) did not. Begun here instead, beside the test process's start: the
command does not depend on the change (the whole package, as the daemon checks it), so it
needs no snapshot and no selection; `compile.project` takes it over when it would run the
very same command (argv, folder and environment compared whole: the same settings, the
same interpreter's answers, the same cache) and keeps only the affected modules' errors, as
with the daemon; HEAD's check of those errors is unchanged. Anything else (another
checker, a live daemon, a policy without the rung, settings that do not load) begins
nothing, and one the climb does not take over is stopped as the process ends (`drop`).

The CLI reads the settings and then begins it from a thread of its own (`begin_beside`): the
interpreter's probe (a process of the project's interpreter, 0.2-0.5 s of wall on a loaded
machine) and mypy's start then run beside the rest of the process's start (its imports,
the workspace's state) instead of before it; the probe's answer is the climb's (`settle`
before the climb; `take` and `drop` wait for it too).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from ...errors import ConfigError
from ...proc import kill_tree
from ...workspace import Workspace
from ..command import Begun, begin_command, child_env, spool_path
from ..config import LadderConfig, load_ladder_config, load_policy
from ..environments import PROBE_FILE, ProjectEnv, probe_env, resolve_python
from ..layout import Layout, discover_layout
from ..models import POLICIES, RungName
from . import mypy_stdlib
from .checker_files import CONFIG_FILES
from .checkers import detect_type_checker, mypy_configured
from .dmypy import DmypyDaemon
from .mypy_plain import flags_for, package_targets, plain_argv, shared_stdlib

__all__ = ["begin", "begin_beside", "drop", "settle", "take"]

_RUNG: RungName = "compile.project"
_POLICIES = ("standard", "strict")
"""The policies whose one-shot climb type-checks through this plain mypy (`ci_parity`'s
climb is CI's, begun when it begins)."""


@dataclass(frozen=True)
class _Early:
    begun: Begun
    cwd: str
    env: dict[str, str]
    files: list[str]
    """The modules it checks."""
    seen: list[tuple[str, int, int]]
    """Those and the settings as they were as it began (`_stamps`)."""


def _stamps(root: Path, targets: list[str]) -> list[tuple[str, int, int]]:
    """(name, mtime_ns, size) of the modules it checks and the settings it reads: a file
    changed between this start and the climb's snapshot would be checked as it was before,
    for a snapshot that holds it as it is after; the climb's own staleness check covers
    what changes after the snapshot."""
    out: list[tuple[str, int, int]] = []
    for rel in [*targets, *CONFIG_FILES]:
        try:
            st = (root / rel).stat()
        except OSError:
            out.append((rel, -1, -1))
            continue
        out.append((rel, st.st_mtime_ns, st.st_size))
    return out


_early: dict[Path, _Early] = {}
"""By workspace state folder: what this process began and no climb took over yet."""


def _env(root: Path, python: Path, workspace: Workspace) -> ProjectEnv:
    spool = spool_path(workspace.spool_dir, f"early-probe-{os.getpid()}.out")
    return anyio.run(probe_env, python, spool, workspace.state_dir / PROBE_FILE)


@dataclass(frozen=True)
class _Plan:
    """What the settings say to check: read in the caller's thread (no process)."""

    root: Path
    config: LadderConfig
    layout: Layout
    workspace: Workspace
    python: Path


def _plan(root: Path, policy: str | None, rungs: list[str] | None) -> _Plan | None:
    root = root.resolve()
    try:
        config = load_ladder_config(root)
        policy = policy or load_policy(root)
        climbed = rungs or [r for name, rs in POLICIES.items() if name == policy for r in rs]
        if policy not in _POLICIES or _RUNG not in climbed:
            return None
        layout = discover_layout(root, config)
        if not layout.is_python or not (layout.packages or layout.modules):
            return None
        workspace = Workspace.for_project(root).ensure()
        return _Plan(root, config, layout, workspace, resolve_python(root, config.python))
    except (ConfigError, OSError, ValueError):
        return None


def _launch(plan: _Plan) -> bool:
    """The interpreter's probe (a process), then mypy's start; whether it began."""
    root, config, workspace = plan.root, plan.config, plan.workspace
    try:
        env = _env(root, plan.python, workspace)
    except (ConfigError, OSError, ValueError):
        return False
    if detect_type_checker(root, config, env) != "mypy":
        return False
    if config.dmypy and DmypyDaemon(workspace).state() == "alive":
        return False  # the rung asks the live daemon
    configured = mypy_configured(root)
    flags = flags_for(root, config, env, configured)
    targets = package_targets(root, plan.layout)
    argv = plain_argv(workspace.state_dir, env, flags, targets)
    shared = shared_stdlib(env, flags, configured)
    if shared is not None:
        mypy_stdlib.seed(shared, workspace.state_dir / "mypy-cache")
    process_env = child_env(None, env.bin_dir)
    spool = spool_path(workspace.spool_dir, f"early-{os.getpid()}.{_RUNG}.out")
    seen = _stamps(root, targets)
    try:
        begun = begin_command(argv, cwd=root, env=process_env, spool=spool)
    except OSError:
        return False
    _early[workspace.state_dir] = _Early(begun, str(root), process_env, targets, seen)
    return True


def begin(root: Path, policy: str | None, rungs: list[str] | None) -> bool:
    """Blocking: begin the plain mypy the one-shot climb of `root` will run over the whole
    package, if it will run one (`--policy`, `--rung` as given, None when not); whether
    one was begun. Reads the settings as the climb reads them; what it cannot read begins
    nothing (the climb says what is wrong)."""
    plan = _plan(root, policy, rungs)
    return plan is not None and _launch(plan)


class _Beside(threading.Thread):
    """`_launch` in a thread; what it raised is raised again by `settle`."""

    def __init__(self, plan: _Plan) -> None:
        super().__init__(name="habitat-early-mypy", daemon=True)
        self._plan = plan
        self.failed: BaseException | None = None

    def run(self) -> None:
        try:
            _launch(self._plan)
        except BaseException as exc:
            self.failed = exc


_beside: list[_Beside] = []


def begin_beside(root: Path, policy: str | None, rungs: list[str] | None) -> None:
    """`begin`, its settings read here (a few milliseconds, no process) and the rest in a
    thread of its own, so the caller goes on while the interpreter's probe runs."""
    plan = _plan(root, policy, rungs)
    if plan is not None:
        thread = _Beside(plan)
        _beside.append(thread)
        thread.start()


def settle() -> None:
    """Blocking: until what `begin_beside` began has begun its mypy or given up; what it
    raised is raised here."""
    while _beside:
        thread = _beside.pop()
        thread.join()
        if thread.failed is not None:
            raise thread.failed


def take(workspace: Workspace, argv: list[str], cwd: Path, env: dict[str, str]) -> Begun | None:
    """Blocking: the mypy begun early for this workspace when it runs exactly `argv` in `cwd`
    with `env` and the files it reads are as they were as it began, now the caller's to
    finish; None otherwise (one that differs is left for `drop`)."""
    settle()
    early = _early.get(workspace.state_dir)
    if early is None or (early.begun.argv, early.cwd, early.env) != (argv, str(cwd), env):
        return None
    if _stamps(cwd, early.files) != early.seen:
        return None
    del _early[workspace.state_dir]
    return early.begun


async def drop(workspace: Workspace | None = None) -> None:
    """Stop what was begun early (for `workspace`; None: any) and not taken over."""
    with anyio.CancelScope(shield=True):
        try:
            await anyio.to_thread.run_sync(settle)
        finally:
            for folder in list(_early):
                if workspace is None or folder == workspace.state_dir:
                    early = _early.pop(folder, None)
                    if early is not None:
                        await kill_tree(early.begun.sup.record, grace=1.0)
                        await early.begun.sup.wait()
