"""Warming the ladder when a project opens, so the first verify is already warm.

The verify slot starts `WarmUp.run` beside a new runner (`VerifyRunner.warm`). A climb waits
only until the steps are under way (`climbable`), and each rung only for the step it uses
(`ready`): `compile.project` for a language server's start (pyright, ty), which it would
otherwise start a second time; while dmypy's start is under way it runs plain mypy cold instead,
as a one-shot verify does (the start is a whole check, and the edit's recheck would come after
it). Nothing else waits: `diagnose.files` builds HEAD's findings for the touched files itself
when the lint baseline is not there yet, the import graph's build is shared
(`SelectionMemo.graph`: one build, a second asker waits for it), and the warm pytest's start too
(`warm_pytest.ensure`, under one lock). A Node project's climbs wait only until its warm
checkers are announced, and race them (toolchains/node/race.py); a Go project's, not at all: its
one step, `go vet -json ./...` at background priority once no verify runs, fills go's build cache
with what a climb's go vet reads (toolchains/go/warm.py). A Python project's steps begin once no
verify runs (`quiet`, the background recording's view of the requests): the verify that trusted
the project climbs alone, as a cold run does, instead of sharing the cores with a whole warm-up
it does not use. Then the project's interpreter is probed (cached per process) and the steps run
side by side, each bounded by the ladder's timeout; dmypy's start, which no rung waits for,
stopped while a verify runs (give_way.py):

* the import graph built into the runner's `SelectionMemo`, then the recorded test dependencies
  loaded into it (a climb reuses both while they are still true);
* the lint baseline: HEAD's ruff findings for every Python file, in the cache `diagnose.files`
  reads (rungs/lint_warm.py);
* the type-check daemon started and checked over the packages (dmypy, with the flags
  `compile.project` gives it, so it does not restart for the first check); for a project that
  configures pyright, the checker found, or basedpyright fetched (rungs/pyright_tools.py), and
  its language server (or ty's) started and asked about every package module
  (rungs/warm_checker.py);
* the warm pytest started, which the test rungs fork per run (rungs/warm_pytest.py).

Once it went through every step, the slot starts the background recording of test dependencies
from it (recorder.py): the same condition gates both.

What it did goes to `warm.json` in the workspace state folder, written as it goes (each step as
it ends, with the process that runs it), where `habitat status` reads it (warm_status.py), and,
once it ended, to the bus as `verify.warmup.finished`. `[tool.habitat.ladder] warmup = false`
(or `HABITAT_LADDER_WARMUP=false`) turns it off."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path

import anyio
import anyio.to_thread

from ...errors import HabitatError
from ...events import EventBus
from ...proc import process_create_time
from ...workspace import Workspace, write_private
from ..config import load_ladder_config
from .warm_status import FILE, STEPS, WarmItem, pytest_glance, warm_lines
from .warmup_checkers import warm_pyrefly, warm_pyright, warm_ty

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..command import Outcome
    from ..config import LadderConfig
    from ..environments import ProjectEnv
    from ..layout import Layout
    from ..rungs.context import RungContext
    from ..rungs.dmypy import DmypyDaemon
    from ..select.memo import SelectionMemo
    from ..snapshot import Snapshot
    from .give_way import GiveWay
# The steps' modules (the rungs, the toolchains' warm parts, the import graph) load in the
# method that runs each step: a warm-up turned off, or waiting for trust, loads none.

__all__ = ["WarmItem", "WarmUp", "pytest_glance", "warm_lines"]

logger = logging.getLogger(__name__)


class WarmUp:
    """One warm-up of one project; `wait()` returns once it ended (however it ended).

    `trusted` returns once the project is trusted (trust.py): nothing of the project runs
    before, so every step — and every warm daemon or background job a step starts — waits
    behind it. Without it (tests of the warm-up itself) the project counts as trusted."""

    def __init__(
        self,
        root: Path,
        *,
        workspace: Workspace,
        bus: EventBus,
        memo: SelectionMemo,
        trusted: Callable[[], Awaitable[None]] | None = None,
        quiet: Callable[[], Awaitable[None]] | None = None,
        give_way: GiveWay | None = None,
    ):
        self.root, self.workspace, self.bus, self.memo = root, workspace, bus, memo
        self.give_way = give_way
        """Stops dmypy's start while a verify runs; None: it never stops (tests of the
        warm-up alone)."""
        self._trusted = trusted
        self._quiet = quiet
        self.waiting_for_trust = False
        """True while it waits for the project to be trusted (nothing has run)."""
        self._untrusted_end = False
        self.items: dict[str, WarmItem] = {}
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._done = anyio.Event()
        self._climbable = anyio.Event()
        self._ended = {step: anyio.Event() for step in STEPS}
        self._begun: set[str] = set()
        self._writing = anyio.Lock()
        self.off = False
        """True when `[tool.habitat.ladder] warmup = false` turned it off."""
        pid = os.getpid()
        self._owner = {"pid": pid, "create_time": process_create_time(pid) or 0.0}
        self.reached: RungContext | None = None
        """The project's context once the warm-up went through every step (a Python
        project, not turned off): what the background recording starts from."""

    async def wait(self) -> None:
        await self._done.wait()

    async def climbable(self) -> None:
        """Returns once a climb may begin: once the steps of a Python or Cargo project are
        under way (each rung waits for its own, `ready`), once a Node project announced the
        warm checkers it starts (which a climb races), else when the warm-up ended."""
        await self._climbable.wait()

    def ended(self, step: str) -> bool:
        return self._ended[step].is_set()

    def running(self, step: str) -> bool:
        return step in self._begun and not self.ended(step)

    async def ready(self, step: str) -> None:
        """Returns once `step` ended, however it ended (or the whole warm-up did)."""
        await self._ended[step].wait()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    async def run(self) -> None:
        self.started_at = time.time()
        listening = self.give_way.listening() if self.give_way else contextlib.nullcontext()
        try:
            with listening:
                await self._steps()
        except HabitatError as exc:  # bad configuration: the verify will say it too
            for step in STEPS:
                self.items.setdefault(step, WarmItem("failed", str(exc)))
        finally:
            self.finished_at = time.time()
            self._done.set()
            self._climbable.set()
            for ended in self._ended.values():
                ended.set()
            # Turned off, or ended before the project was trusted: no trace at all (no file,
            # no event), as nothing was warmed.
            if not (self.off or self._untrusted_end):
                with anyio.CancelScope(shield=True):
                    await self._report()

    def _skip_all(self, why: str) -> None:
        for step in STEPS:
            self.items.setdefault(step, WarmItem("skipped", why))

    async def _steps(self) -> None:
        config = load_ladder_config(self.root)
        if not config.warmup:
            self.off = True
            self._skip_all("turned off ([tool.habitat.ladder] warmup = false)")
            return
        if self._trusted is not None:
            self.waiting_for_trust = True
            self._untrusted_end = True
            await self._trusted()
            self.waiting_for_trust = self._untrusted_end = False
        from ..environments import probe_env, resolve_python
        from ..layout import discover_layout
        from ..toolchains import snapshot_of
        from ..toolchains.go import GO
        from ..toolchains.node.detect import is_node_project
        from ..toolchains.rust.warm import warm_rust

        await self._write()  # under way: a status now lists the steps still to come
        layout = await anyio.to_thread.run_sync(discover_layout, self.root, config)
        if not layout.is_python:
            if await anyio.to_thread.run_sync(is_node_project, self.root):
                snapshot = await anyio.to_thread.run_sync(snapshot_of, self.root)
                await self._step("type_daemon", self._node, config, snapshot, layout)
            cargo = (self.root / "Cargo.toml").is_file()
            if not cargo and not await anyio.to_thread.run_sync(GO.detect, self.root):
                self._skip_all("not a Python project")
                return
        # The climbs go at once, each rung waiting only for a step under way that it uses;
        # the steps begin once no verify runs (the one that trusted the project climbs
        # alone, as fast as a cold run: on 2 cores the steps took the CPU it needed).
        self._climbable.set()
        if self._quiet is not None:
            await self._quiet()
        snapshot = await anyio.to_thread.run_sync(snapshot_of, self.root)
        if not layout.is_python:  # a Cargo or Go project: one step
            if cargo:
                rust = self._context(config, snapshot, layout, toolchain="rust")
                await self._step("lint_baseline", warm_rust, rust, WarmItem, self.give_way)
            else:
                go = self._context(config, snapshot, layout, toolchain="go")
                await self._step("lint_baseline", self._go, go)
            self._skip_all("not a Python project")
            return
        env = await probe_env(
            resolve_python(self.root, config.python), self.workspace.spool_dir / "probe-warm.out"
        )
        ctx = self._context(config, snapshot, layout, env)
        cache_dir = self.workspace.state_dir / "grimp"
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._graph_then_deps, layout, cache_dir)
            if config.command_for("diagnose.files") is not None:
                self._end("lint_baseline", WarmItem("skipped", "diagnose.files is configured"))
            else:
                tg.start_soon(self._step, "lint_baseline", self._lint, ctx)
            tg.start_soon(self._step, "type_daemon", self._daemon, ctx)
            tg.start_soon(self._step, "pytest", self._pytest, ctx)
        self.reached = ctx

    async def _graph_then_deps(self, layout: Layout, cache_dir: Path) -> None:
        await self._step("import_graph", self._graph, layout, cache_dir)
        await self._step("test_deps", self._deps)

    def _end(self, name: str, item: WarmItem) -> None:
        self.items[name] = item
        self._ended[name].set()

    def _context(
        self,
        config: LadderConfig,
        snapshot: Snapshot,
        layout: Layout,
        env: ProjectEnv | None = None,
        toolchain: str = "python",
    ) -> RungContext:
        """A climb's context for the warm-up's own rung work, on the snapshot it opened with."""
        from ..config import load_policy
        from ..rungs.context import RungContext

        return RungContext(
            root=self.root,
            workspace=self.workspace,
            config=config,
            policy=load_policy(self.root),
            ladder_id=f"warm-{int(time.time())}",
            snapshot=snapshot,
            touched=snapshot.touched,
            layout=layout,
            env=env,
            toolchain=toolchain,
        )

    async def _step(self, name: str, fn: Callable[..., Awaitable[WarmItem]], *args: object) -> None:
        started = time.monotonic()
        self._begun.add(name)
        await self._write()  # a status lists it in progress
        try:
            item = await fn(*args)
        except (OSError, HabitatError, ValueError) as exc:
            item = WarmItem("failed", str(exc)[:300])
        item.duration_s = round(time.monotonic() - started, 3)
        self._end(name, item)
        await self._write()

    async def _node(self, config: LadderConfig, snapshot: Snapshot, layout: Layout) -> WarmItem:
        # A Node project: the warm tsc of each checked workspace (toolchains/node/tsc_warm.py),
        # the warm eslint of each linted folder (eslint_warm.py) and the warm jest of each
        # workspace jest tests (jest_warm.py).
        if not config.warm_checker:
            return WarmItem("skipped", "warm_checker = false: tsc, eslint and jest run cold")
        from .warmup_node import warm_node  # here: only a Node project loads its toolchain

        ctx = self._context(config, snapshot, layout, toolchain="node")
        return await warm_node(ctx, self.workspace, self._climbable)

    async def _go(self, ctx: RungContext) -> WarmItem:
        from ..toolchains.go.warm import warm_vet

        return WarmItem(*await warm_vet(ctx))  # go vet -json ./... (toolchains/go/warm.py)

    async def _graph(self, layout: Layout, cache_dir: Path) -> WarmItem:
        from ..select.selection import warm_graph

        modules = await anyio.to_thread.run_sync(warm_graph, layout, cache_dir, self.memo)
        if modules == 0:
            return WarmItem("skipped", "no packages found")
        return WarmItem("warm", f"{modules} modules")

    async def _deps(self) -> WarmItem:
        from ..select.testdeps import deps_store_dir, load_testdeps

        store = deps_store_dir(self.workspace.state_dir)
        deps = await anyio.to_thread.run_sync(self.memo.deps, store, load_testdeps)
        if deps is None or not deps.tests:
            return WarmItem("skipped", "none recorded yet (every test run records them)")
        return WarmItem("warm", deps.summary)

    async def _lint(self, ctx: RungContext) -> WarmItem:
        from ..rungs.compare import head_of
        from ..rungs.lint_warm import warm_lint_baseline

        head = head_of(ctx)
        if isinstance(head, str):
            return WarmItem("skipped", f"no baseline: {head}")
        assert ctx.env is not None
        return WarmItem("warm", await warm_lint_baseline(ctx, ctx.env, head))

    async def _daemon(self, ctx: RungContext) -> WarmItem:
        from ..rungs.checkers import detect_type_checker, mypy_configured
        from ..rungs.compile import mypy_flags, package_targets
        from ..rungs.dmypy import DmypyDaemon

        env = ctx.env
        assert env is not None
        if ctx.config.command_for("compile.project") is not None:
            return WarmItem("skipped", "compile.project is configured")
        checker = detect_type_checker(ctx.root, ctx.config, env)
        if checker in ("pyright", "basedpyright"):
            return await warm_pyright(ctx, env, checker)
        if checker == "ty":
            return await warm_ty(ctx, env)
        if checker == "pyrefly":
            return await warm_pyrefly(ctx, env)
        if checker != "mypy" or not ctx.config.dmypy:
            return WarmItem("skipped", f"the type checker is {checker}, not a warm dmypy")
        targets = await anyio.to_thread.run_sync(package_targets, ctx.root, ctx.layout)
        if not targets:
            return WarmItem("skipped", "no package modules")
        daemon = DmypyDaemon(ctx.workspace)
        daemon.prepare()
        configured = await anyio.to_thread.run_sync(mypy_configured, ctx.root)
        argv = daemon.argv(env, [*mypy_flags(ctx, env, configured), *targets])
        if self.give_way is None:
            outcome = await ctx.run(
                "compile.project", argv, suffix=".warm.out", reap_leftovers=False
            )
        else:
            outcome, stops = await self._giving_way(ctx, self.give_way, daemon, argv)
        if outcome.exit_code not in (0, 1) or outcome.timed_out:
            return WarmItem("failed", f"dmypy exited {outcome.exit_code}: {outcome.tail[-200:]}")
        pid = daemon.pid()
        detail = f"dmypy daemon (pid {pid}), {len(targets)} modules checked"
        if self.give_way is not None and stops:
            detail += f"; its start paused {stops} time(s) so a verify could run first"
        return WarmItem("warm", detail, pid=pid)

    @staticmethod
    async def _giving_way(
        ctx: RungContext, give_way: GiveWay, daemon: DmypyDaemon, argv: list[str]
    ) -> tuple[Outcome, int]:
        """dmypy's start, stopped while a verify runs: the client's group from its spawn, the
        daemon's (a session of its own) once its status file names it; and how many stops."""
        from ..hooks import LadderHooks

        hooks = LadderHooks(
            ladder_id=ctx.ladder_id,
            process_started=lambda task, record: give_way.add_process(record.pid),
        )
        stops = give_way.stops
        with give_way.holding():
            async with anyio.create_task_group() as tg:
                tg.start_soon(give_way.follow, daemon.pid)
                outcome = await dataclasses.replace(ctx, hooks=hooks).run(
                    "compile.project", argv, suffix=".warm.out", reap_leftovers=False
                )
                tg.cancel_scope.cancel()
        return outcome, give_way.stops - stops

    async def _pytest(self, ctx: RungContext) -> WarmItem:
        from ..rungs.warm_pytest import EXITED_AT_START, STAYS_FRESH, WarmPytest
        from ..rungs.warm_pytest import ensure as ensure_warm_pytest

        env = ctx.env
        assert env is not None
        if not ctx.config.warm_pytest:
            return WarmItem("skipped", "turned off ([tool.habitat.ladder] warm_pytest = false)")
        if not env.has("pytest"):
            return WarmItem("skipped", f"pytest not installed in {env.label}")
        warm = WarmPytest(ctx.workspace)
        failed = await ensure_warm_pytest(warm, env, ctx.root, ctx.process_env())
        if failed is not None and STAYS_FRESH in failed:
            # A decision, not a breakage: pytest imports the project itself at start-up.
            return WarmItem("fresh", failed.removeprefix(EXITED_AT_START))
        if failed is not None:
            return WarmItem("failed", failed)
        record = warm.record()
        pid = record.pid if record else None
        return WarmItem("warm", f"pytest imported (pid {pid or '?'}), forked per run", pid=pid)

    async def _write(self) -> dict[str, object]:
        """`warm.json` as it stands: `finished_at` None while under way, with the process that
        runs it (a reader tells a warm-up under way from one its process left). One write at a
        time, each of the state when it writes: the file ends as the last state."""
        async with self._writing:
            data: dict[str, object] = {
                "root": str(self.root),
                "started_at": self.started_at,
                "finished_at": self.finished_at,
                "owner": self._owner,
                "items": {k: asdict(self.items[k]) for k in STEPS if k in self.items},
                "begun": [k for k in STEPS if k in self._begun and k not in self.items],
            }
            path = self.workspace.state_dir / FILE
            try:
                await anyio.to_thread.run_sync(write_private, path, json.dumps(data))
            except OSError as exc:
                logger.warning("could not write %s: %s", path, exc)
            return data

    async def _report(self) -> None:
        data = await self._write()
        data.pop("owner")
        self.bus.publish("verify.warmup.finished", data=data)
