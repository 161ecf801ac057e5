"""What every rung gets (the climb's context) and how a process outcome becomes a result."""

from __future__ import annotations

import os
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ...config import ShellConfig, load_shell_config
from ...errors import ConfigError
from ...proc import ProcessRecord
from ...proc.spool_keeper import Budget
from ...workspace import Workspace
from ..command import Outcome, child_env, run_command, spool_path
from ..config import LadderConfig
from ..environments import ProjectEnv
from ..generated import Generator
from ..head import HeadTree
from ..hooks import LadderHooks
from ..layout import Layout
from ..models import Diagnostic, Policy, RungName, RungResult, RungState, Selection
from ..select.selection import Impact
from ..snapshot import Snapshot
from .long_waits import LongWaits

if TYPE_CHECKING:
    from .warm_pytest import WarmPytest

__all__ = [
    "RungContext",
    "from_outcome",
    "nothing_to_do",
    "skipped",
    "spool_budget",
    "with_substrate",
]

T = TypeVar("T")

# Rungs whose processes get a fresh substrate each (DESIGN §5 "Substrate").
_SUBSTRATE_RUNGS = frozenset({"test.scoped", "test.full"})

NOTHING_CHANGED = "nothing changed since HEAD (name files or a filter, or climb to test.full)"


def spool_budget(root: Path) -> Budget:
    """The shell's spool budgets, which rung processes' spools keep to as well."""
    try:
        shell = load_shell_config(root)
    except ConfigError:
        shell = ShellConfig()  # the shell refuses to start on it; its defaults here
    return Budget(shell.spool_run_budget_bytes, shell.spool_workspace_budget_bytes)


@dataclass
class RungContext:
    root: Path
    workspace: Workspace
    config: LadderConfig
    policy: Policy
    ladder_id: str
    snapshot: Snapshot
    touched: list[str]
    """The change: relative paths, deleted ones included."""
    layout: Layout
    env: ProjectEnv | None
    """None for a project that is not Python."""
    impact: Impact = field(default_factory=Impact)
    selection: Selection = field(default_factory=lambda: Selection(full=True))
    head: HeadTree | None = None
    """The snapshot's base, built on first use by a rung that compares with it."""
    hooks: LadderHooks | None = None
    spool_budget: Budget | None = None
    """What each rung process's spool may keep on disk (`[tool.habitat.shell]`'s budgets)."""
    running_test: dict[RungName, str] = field(default_factory=dict)
    generators: dict[str, Generator] = field(default_factory=dict)
    """`[tool.habitat.generated]`."""
    outdated: dict[str, str] = field(default_factory=dict)
    """Generator → why its outputs are older than its inputs, when the climb began."""
    """The test that was running when a rung's process died, when the substrate knows it."""
    toolchain: str = "python"
    """Which toolchain runs the rung (`toolchains/`); `touched` then holds the files it owns
    and those no detected toolchain owns."""
    spool_tag: str = ""
    """Set when several toolchains climb, so their spools of one rung stay apart."""
    rungs: tuple[RungName, ...] = ()
    """The rungs this climb runs, in order (empty when a caller did not say): a rung may do
    work a later one reuses (the Rust toolchain's clippy build for `test.scoped`)."""
    keeps_warm: bool = True
    """Whether the climbing process stays up after the verdict, so a daemon it starts (dmypy)
    serves the next climb. False for a one-shot `habitat verify`, which stops what it starts
    at exit: it uses a daemon some other process keeps alive, and starts none."""
    prestarted_pytest: WarmPytest | None = None
    """The warm pytest a one-shot climb started beside its first rungs (ladder.py), its own
    (a folder of this process's, never the workspace's shared one), so the interpreter and
    pytest's imports are done before a test rung needs them: the test rung waits for that
    start rather than running fresh. Stopped when the climb ends."""
    long_waits: LongWaits = field(default_factory=LongWaits)
    """The rungs whose work waits on a warm checker's start now (verify/ahead.py reads it)."""

    def task(self, rung: RungName) -> str:
        return f"{self.ladder_id}.{rung}"

    def spool(self, rung: RungName, suffix: str = ".out") -> Path:
        return spool_path(self.workspace.spool_dir, self.task(rung) + self.spool_tag + suffix)

    def existing(self, paths: Sequence[str]) -> list[str]:
        return [p for p in paths if (self.root / p).exists()]

    def process_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return child_env(extra, self.env.bin_dir if self.env else None)

    async def run(
        self,
        rung: RungName,
        argv: Sequence[str],
        *,
        suffix: str = ".out",
        extra_env: Mapping[str, str] | None = None,
        reap_leftovers: bool = True,
        cwd: Path | None = None,
        substrate: bool = True,
    ) -> Outcome:
        """`argv` as one of the rung's processes. A test rung's process gets a fresh
        substrate, unless `substrate` is False (a build that runs no test)."""
        hooks, task = self.hooks, self.task(rung)
        on_spawn = None
        if hooks is not None and hooks.process_started is not None:
            started = hooks.process_started

            def on_spawn(record: ProcessRecord) -> None:
                started(task, record)

        async def run(env: Mapping[str, str] | None) -> Outcome:
            return await run_command(
                argv,
                cwd=cwd or self.root,
                env=self.process_env(env),
                spool=self.spool(rung, suffix),
                limit_s=self.config.timeout_s,
                cap=self.config.output_cap_bytes,
                reap_leftovers=reap_leftovers,
                on_spawn=on_spawn,
                budget=self.spool_budget,
            )

        # runner hook: each test task gets a fresh substrate (temp dir, SQLite db, ports).
        if not substrate or hooks is None or hooks.substrate is None:
            return await run(extra_env)
        if rung not in _SUBSTRATE_RUNGS:
            return await run(extra_env)
        async with hooks.substrate(task) as lease:
            outcome = await run(_with_substrate(lease.env, extra_env))
            if outcome.exit_code != 0 or outcome.timed_out:
                lease.mark_failed()
            if outcome.signal is not None and (test := lease.current_test()):
                self.running_test[rung] = test
            return outcome


async def with_substrate(
    ctx: RungContext,
    rung: RungName,
    extra_env: Mapping[str, str] | None,
    work: Callable[[dict[str, str]], Awaitable[T]],
    failed: Callable[[T], bool],
) -> T:
    """`work` with the variables a process of `rung` gets (`run`'s): a test rung's, a fresh
    substrate's under the rung's own; the substrate is kept as failed when `failed` says so.
    For work a warm process does in the rung's stead (the warm jest's run)."""
    hooks = ctx.hooks
    if hooks is None or hooks.substrate is None or rung not in _SUBSTRATE_RUNGS:
        return await work(dict(extra_env or {}))
    async with hooks.substrate(ctx.task(rung)) as lease:
        result = await work(_with_substrate(lease.env, extra_env))
        if failed(result):
            lease.mark_failed()
        return result


def _with_substrate(
    substrate: Mapping[str, str], extra: Mapping[str, str] | None
) -> dict[str, str]:
    """The rung's own env over the substrate's, except `PYTHONPATH`, which both need: the
    substrate's pytest plugin (loaded by `-p` from `PYTEST_ADDOPTS`) must stay importable
    when the rung adds its own plugin path (test dependency recording); replaced, pytest
    failed with "Error importing plugin habitat_substrate_plugin"."""
    env = {**substrate, **(extra or {})}
    paths = [p for v in (extra or {}, substrate) for p in v.get("PYTHONPATH", "").split(os.pathsep)]
    if any(paths):
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    return env


def skipped(
    ctx: RungContext, rung: RungName, reason: str, *, missing: str | None = None
) -> RungResult:
    return RungResult(
        rung=rung, task=ctx.task(rung), state="skipped", reason=reason, missing=missing
    )


def nothing_to_do(ctx: RungContext, rung: RungName, reason: str) -> RungResult:
    """Skipped because the change gives the rung no work (said plainly for a clean tree)."""
    return skipped(ctx, rung, reason if ctx.touched else NOTHING_CHANGED)


def from_outcome(
    ctx: RungContext,
    rung: RungName,
    outcome: Outcome,
    *,
    tool: str,
    state: RungState | None = None,
    diagnostics: list[Diagnostic] | None = None,
    reason: str | None = None,
    notes: list[str] | None = None,
) -> RungResult:
    """A result for a finished process; timeouts and signals override the tool's verdict."""
    if outcome.timed_out:
        state, reason = "error", f"timed out after {ctx.config.timeout_s:g} s; process tree killed"
    elif outcome.signal is not None:
        state, reason = "died", f"killed by {outcome.signal}"
    elif state is None:
        state = "green" if outcome.exit_code == 0 else "red"
    if reason is None and state == "red":
        reason = f"{tool} exited {outcome.exit_code}"
    diagnostics = list(diagnostics or [])
    notes = list(notes or [])
    if state == "died" and (test := ctx.running_test.get(rung)):
        reason = f"killed by {outcome.signal} while running {test}"
        notes.append(f"running {test} when it died")
        diagnostics.insert(
            0,
            Diagnostic(
                file=test.split("::", 1)[0],
                code=outcome.signal,
                message=f"{test}: the test process died by {outcome.signal}",
                source=tool,
            ),
        )
    return RungResult(
        rung=rung,
        task=ctx.task(rung),
        state=state,
        reason=reason,
        tool=tool,
        duration_s=round(outcome.duration_s, 3),
        command=outcome.argv,
        command_line=shlex.join(outcome.argv),
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        diagnostics=diagnostics,
        notes=notes,
        output=outcome.tail,
        spool=str(outcome.spool),
    )
