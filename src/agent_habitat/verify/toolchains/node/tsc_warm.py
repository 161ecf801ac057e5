"""`compile.project`'s warm tsc: one long-lived Node process per checked workspace, on the
project's own `typescript` (its compiler API: a semantic-diagnostics builder over parsed
files kept between checks, tsc_warm.cjs), owned by the habitat process that started it with
the warm checkers' lifecycle (rungs/warm_checker.py: a status file `habitat status` lists,
stopped with its owner, started again when it died or its configuration changed, the rung's
notes saying so).

A cold `tsc --noEmit --incremental` reads, parses and binds the whole program on every
verify (8–15 s on defu here); the warm one re-stats what it read and re-checks what the
change reaches (0.3–1.5 s). Its answer is tsc's own output (`ts.formatDiagnostic`, tsc's
order), parsed by the same `parse_tsc`, so a warm finding and a cold one compare equal
(tests/e2e/test_node_tsc_warm.py holds it against a real tsc). HEAD's findings come from the
same process with HEAD's text of the changed source files laid over the disk's, when the
change touches only source files; else from a cold tsc in HEAD's export (compile.py).
A one-shot `habitat verify` keeps no server and runs tsc cold.

A tsconfig with project references (`references`, a monorepo's solution file) is checked as
`tsc -b` checks it: each project it reaches, references first, with its own options,
answering for its own files; unlike `tsc -b`, a project reads its references' sources
rather than their built `.d.ts` (as tsserver does), so nothing has to be built and nothing
is written. A solution (no root files, `references`: a monorepo's root) is no program, as for
`tsc -b`: only its config's diagnostics, so the @types packages its defaults would reach are
neither read nor checked. The cold path runs the same script once (`--once`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio.to_thread

from ...command import Outcome, answered
from ...rungs import warm_checker
from ...rungs.context import RungContext
from ...rungs.lsp import LspError
from ...rungs.warm_checker import ServerSpec, WarmChecker
from .detect import SOURCE_SUFFIXES, NodeProject, Workspace, load_project

__all__ = [
    "SCRIPT",
    "TscWarm",
    "checked",
    "head_overlay",
    "slot",
    "spec_for",
    "warm_tsc",
    "warm_up",
]

SCRIPT = Path(__file__).with_name("tsc_warm.cjs")
_LOCKS = ("package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb")


def spec_for(ctx: RungContext, project: NodeProject, ws: Workspace, tsc: Path) -> ServerSpec:
    typescript = tsc.resolve().parent.parent  # node_modules/typescript/bin/tsc
    rel = os.path.relpath
    watched = [rel(project.root / n, ws.path) for n in _LOCKS if (project.root / n).is_file()]
    # A package.json decides module formats and resolutions that a reused program keeps.
    watched += sorted({"package.json", rel(project.root / "package.json", ws.path)})
    watched.append(rel(typescript / "package.json", ws.path))
    return ServerSpec(
        tool="tsc",
        argv=["node", str(SCRIPT)],
        env=ctx.process_env(),
        settings={
            "$init": {
                "typescript": str(typescript),
                "project": str(ws.path / "tsconfig.json"),
                "cwd": str(ws.path),
            },
            "$timeout": ctx.config.timeout_s,
        },
        slot=slot(ws),
        config_files=tuple(watched),
        kind="checker",
    )


class TscWarm(WarmChecker):
    """The warm tsc of one workspace: `WarmChecker`'s lifecycle, tsc_warm.cjs's protocol."""

    def start(self) -> None:
        client = self.spawn("tsc.log", lambda _section: None)
        timeout = max(warm_checker.START_TIMEOUT_S, float(self.spec.settings.get("$timeout", 0)))
        params = {"processId": os.getpid(), **self.spec.settings["$init"]}
        self.initialize(client, params, timeout)  # the first full check happens here
        self.started()

    def tsc(
        self, touched: list[str], overlay: dict[str, str | None], timeout: float
    ) -> dict[str, Any]:
        """tsc's output for the files on disk now, `overlay` laid over them (blocking)."""
        client = self.client
        assert client is not None
        with self._guard:
            params = {"touched": touched, "overlay": overlay}
            answer = client.request("habitat/check", params, timeout)
            self.checks += 1
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            raise LspError(f"habitat/check: unexpected answer {str(answer)[:200]}")
        return answer


def _make(workspace: Any, root: Path, spec: ServerSpec, key: str) -> WarmChecker:
    return TscWarm(workspace, root, spec, key)


def head_overlay(ctx: RungContext, head_read: Any, ws: Workspace) -> dict[str, str | None] | None:
    """HEAD's text of each changed source file of the workspace (None: not at HEAD), or None
    when the change touches anything else there (a configuration, a deleted file): then only
    a cold tsc in HEAD's export can say what HEAD's check was (blocking)."""
    overlay: dict[str, str | None] = {}
    prefix = f"{ws.rel}/" if ws.rel else ""
    deleted = set(ctx.snapshot.deleted)
    for rel in ctx.touched:
        if not rel.startswith(prefix) or "node_modules/" in rel:
            continue
        if not rel.endswith(SOURCE_SUFFIXES) or rel in deleted:
            return None
        data = head_read(rel)
        overlay[str(ctx.root / rel)] = None if data is None else data.decode("utf-8")
    return overlay


async def warm_tsc(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    tsc: Path,
    notes: list[str],
    overlay: dict[str, str | None] | None = None,
    *,
    may_start: bool = True,
) -> Outcome | None:
    """tsc's outcome from the workspace's warm checker (started first when `may_start` and
    there is none); None (and why, in `notes`) when the cold CLI must run instead."""
    if not ctx.config.warm_checker:
        notes.append("tsc ran cold: [tool.habitat.ladder] warm_checker = false")
        return None
    spec = spec_for(ctx, project, ws, tsc)
    one_shot = ctx.hooks is None  # a one-shot climb keeps no server
    warm, said = await warm_checker.get(
        ctx.workspace, ws.path, spec, "", may_start=may_start and not one_shot, make=_make
    )
    if said:
        notes.append(said)
    if not isinstance(warm, TscWarm):
        if one_shot:
            notes.append("tsc ran cold: a one-shot verify keeps no warm checker")
        return None
    started = time.monotonic()
    touched = [str(ctx.root / rel) for rel in ctx.touched]
    try:
        answer = await anyio.to_thread.run_sync(
            warm.tsc, touched, overlay or {}, ctx.config.timeout_s, abandon_on_cancel=True
        )
    except (LspError, OSError) as exc:
        await warm_checker.failed(ctx.workspace, spec.slot)
        notes.append(f"the warm tsc failed ({exc}); stopped, ran tsc cold")
        return None
    text = str(answer["text"])
    pid = warm.record.pid if warm.record else "?"
    what = "HEAD's text of the changed files" if overlay else "the change"
    projects = int(answer.get("projects", 1))
    each = f" over {projects} projects (references)" if projects > 1 else ""
    notes.append(
        f"tsc: the warm checker (pid {pid}, typescript {answer.get('version', '?')}) checked "
        f"{what}: {answer.get('affected', '?')} of {answer.get('files', '?')} files "
        f"re-checked{each}"
    )
    suffix = ".base.warm.out" if overlay else ".warm.out"
    return await answered(
        [*spec.argv, str(ws.path / "tsconfig.json")],
        2 if int(answer.get("errors", 0)) else 0,
        text,
        ctx.spool("compile.project", suffix),
        started,
        ctx.config.output_cap_bytes,
    )


def slot(ws: Workspace) -> str:
    """The warm checkers' slot of the workspace's warm tsc."""
    return f"node:{ws.rel}"


def checked(project: NodeProject) -> list[tuple[Workspace, Path]]:
    """Each workspace with a `tsconfig.json` and the project's tsc, with that tsc."""
    found = [(ws, project.bin(ws, "tsc")) for ws in project.workspaces]
    return [(ws, tsc) for ws, tsc in found if tsc and (ws.path / "tsconfig.json").is_file()]


async def warm_up(ctx: RungContext) -> tuple[str, str]:
    """Start the warm tsc of every workspace with a `tsconfig.json` and the project's tsc,
    at background priority, so later verifies are warm (the warm-up's `type_daemon` step
    for a Node project): (`warm`, `skipped` or `failed`, what it did)."""
    project = await anyio.to_thread.run_sync(load_project, ctx.root)
    done: list[str] = []
    for ws, tsc in checked(project):
        spec = spec_for(ctx, project, ws, tsc)
        warm, said = await warm_checker.get(
            ctx.workspace, ws.path, spec, "", may_start=True, make=_make, background=True
        )
        if warm is None:
            return "failed", said or "the warm tsc did not start"
        pid = warm.record.pid if warm.record else "?"
        done.append(f"tsc checker pid {pid} ({ws.rel or 'the project'})")
    if not done:
        return "skipped", "node: no workspace with a tsconfig.json and typescript installed"
    return "warm", ", ".join(done)
