"""`test.scoped`'s warm jest: one long-lived Node process per workspace that runs jest, on
the project's own jest (jest-cli's `buildArgv` and @jest/core's `runCLI`, jest_warm.cjs),
owned by the habitat process that started it with the warm checkers' lifecycle
(rungs/warm_checker.py: a status file `habitat status` lists, stopped with its owner,
started again when it died or its configuration changed).

A cold `jest --findRelatedTests` loads jest and reads its configuration on every verify: a
`jest.config.ts` goes through ts-node, which type-checks it (ms 3.0.0: 17 of the related
run's 27 CPU-seconds, `node --cpu-prof`). The warm one keeps both loaded and runs the same
arguments through `runCLI`, so jest normalizes the configuration, builds its haste map and
its dependency graph and writes its JSON report as the CLI does, and the rung reads the
report the same way. The tests themselves run in jest's worker processes, started for the
run and ended with it, never in the warm process; each run gets the substrate's variables,
which the workers inherit. What its answers depend on besides the tests' files: jest's
configuration files, the `package.json`s, the lockfiles and what the package manager wrote
into node_modules, jest's own `package.json` (a change starts a new process), and every local
module the configuration loaded (the process answers `stale` and is started again). A run
the verify stops (a red beside it, the climb cancelled) stops the process and its workers.
A one-shot `habitat verify` keeps no server and runs the CLI cold, as does jest before 29
(no `workerIdleMemoryLimit`, so no way to keep the tests out of the warm process).

The host's warm-up starts it (`warm_up`, at background priority, beside the warm tsc and
eslint) once the project is opened, so the first verify does not wait for jest's
configuration; a verify that comes while that start is under way makes it the user's
(`warm_checker.hurry`) and waits for it: the start is the configuration's load a cold CLI
would make too.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ...command import Outcome, answered
from ...models import RungName
from ...rungs import warm_checker
from ...rungs.context import RungContext, with_substrate
from ...rungs.lsp import LspError
from ...rungs.warm_checker import ServerSpec, WarmChecker
from .detect import NodeProject, Workspace
from .jest_config import transpiled_config

__all__ = [
    "SCRIPT",
    "JestWarm",
    "jest_package",
    "slot",
    "spec_for",
    "transpiled_config",
    "warm_jest",
    "warm_up",
    "warmed",
]

SCRIPT = Path(__file__).with_name("jest_warm.cjs")
_LOCKS = ("package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb")
_INSTALLED = (".package-lock.json", ".modules.yaml", ".yarn-integrity", ".yarn-state.yml")
_CONFIGS = ("jest.config.",)
_RUNG: RungName = "test.scoped"


def jest_package(jest: Path) -> Path:
    """jest's `package.json` for its `node_modules/.bin/jest`."""
    return jest.resolve().parent.parent / "package.json"  # jest/bin/jest.js


def _major(jest: Path) -> int:
    try:
        data = json.loads(jest_package(jest).read_text(encoding="utf-8"))
        return int(str(data.get("version", "0")).split(".")[0])
    except (OSError, ValueError):
        return 0


def _watched(project: NodeProject, ws: Workspace, jest: Path) -> list[str]:
    rel = os.path.relpath
    folder = ws.path
    names = sorted(p.name for p in folder.glob("*") if p.name.startswith(_CONFIGS))
    watched = [*names, "package.json", rel(project.root / "package.json", folder)]
    watched += [rel(project.root / n, folder) for n in _LOCKS if (project.root / n).is_file()]
    for modules in dict.fromkeys((folder / "node_modules", project.root / "node_modules")):
        watched += [rel(modules / n, folder) for n in _INSTALLED if (modules / n).is_file()]
    watched.append(rel(jest_package(jest), folder))
    return sorted(dict.fromkeys(watched))


def spec_for(ctx: RungContext, project: NodeProject, ws: Workspace, jest: Path) -> ServerSpec:
    init: dict[str, Any] = {"cwd": str(ws.path)}
    if (config := transpiled_config(ctx, project, ws)) is not None:
        init["transpileTsConfig"] = config
    return ServerSpec(
        tool="jest",
        argv=["node", str(SCRIPT)],
        env=ctx.process_env(),
        settings={"$init": init, "$timeout": ctx.config.timeout_s},
        slot=slot(ws),
        config_files=tuple(_watched(project, ws, jest)),
        kind="test runner",
    )


class JestWarm(WarmChecker):
    """The warm jest of one workspace: `WarmChecker`'s lifecycle, jest_warm.cjs's protocol."""

    def start(self) -> None:
        client = self.spawn("jest.log", lambda _section: None)
        timeout = max(warm_checker.START_TIMEOUT_S, float(self.spec.settings.get("$timeout", 0)))
        params = {"processId": os.getpid(), **self.spec.settings["$init"]}
        self.initialize(client, params, timeout)  # the configuration is read here
        self.started()

    def run(
        self, args: list[str], env: dict[str, str], timeout: float, stream: Path | None = None
    ) -> dict[str, Any]:
        """jest's answer for `args` with `env` (blocking); `stream`: the file failed_stream.cjs
        appends each file with a failed test to, as jest reports it."""
        client = self.client
        assert client is not None
        params: dict[str, Any] = {"args": args, "env": env}
        if stream is not None:
            params["stream"] = str(stream)
        with self._guard:
            answer = client.request("habitat/run", params, timeout)
            self.checks += 1
        if not isinstance(answer, dict) or not any(
            k in answer for k in ("code", "stale", "inBand")
        ):
            raise LspError(f"habitat/run: unexpected answer {str(answer)[:200]}")
        return answer


def _rel(path: str, root: Path) -> str:
    return os.path.relpath(path, root)


def _make(workspace: Any, root: Path, spec: ServerSpec, key: str) -> WarmChecker:
    return JestWarm(workspace, root, spec, key)


async def _answer(
    ctx: RungContext,
    warm: JestWarm,
    args: list[str],
    extra_env: dict[str, str],
    stream: Path | None,
) -> dict[str, Any]:
    """The warm jest's answer with a fresh substrate's variables, as the CLI would get them;
    a run the verify stops stops the process (its workers with it)."""

    async def run(env: dict[str, str]) -> dict[str, Any]:
        full = ctx.process_env(env)
        try:
            return await anyio.to_thread.run_sync(
                warm.run, args, full, ctx.config.timeout_s, stream, abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await warm_checker.failed(ctx.workspace, warm.spec.slot)
            raise

    return await with_substrate(ctx, _RUNG, extra_env, run, lambda a: a.get("code") != 0)


async def warm_jest(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    jest: Path,
    args: list[str],
    extra_env: dict[str, str],
    notes: list[str],
    stream: Path | None = None,
) -> Outcome | None:
    """jest's outcome for `args` from the workspace's warm jest (started first when there is
    none); None (and why, in `notes`) when the CLI must run cold. `stream`: where each file
    with a failed test is told as jest reports it (head_ahead.py)."""
    if not ctx.config.warm_checker:
        return None
    if ctx.hooks is None:
        return None  # a one-shot climb keeps no server: the CLI, as before
    if _major(jest) < 29:
        notes.append("jest ran cold: the warm runner needs jest 29 or later")
        return None
    spec = await anyio.to_thread.run_sync(spec_for, ctx, project, ws, jest)
    if warm_checker.announced(ctx.workspace, spec.slot) is not None:
        # The warm-up's start is under way (or about to begin): the verify waits on it, so
        # it is the user's now; a cold CLI beside it would read the configuration again.
        hurried = warm_checker.hurry(ctx.workspace, spec.slot)
        notes.append(
            "jest: the warm-up was starting its warm runner; the verify waited for that start"
            + (f" ({hurried})" if hurried else "")
        )
    for attempt in (1, 2):
        warm, said = await warm_checker.get(
            ctx.workspace, ws.path, spec, "", may_start=True, make=_make
        )
        if said:
            notes.append(said)
        if not isinstance(warm, JestWarm):
            return None
        started = time.monotonic()
        try:
            answer = await _answer(ctx, warm, args, extra_env, stream)
        except (LspError, OSError) as exc:
            await warm_checker.failed(ctx.workspace, spec.slot)
            notes.append(f"the warm jest failed ({str(exc)[-300:]}); stopped, ran jest cold")
            return None
        if "inBand" in answer:
            notes.append(
                f"jest ran cold: its configuration asks for in-band runs ({answer['inBand']}), "
                "which would run the tests inside the warm process"
            )
            return None
        if "stale" in answer:
            await warm_checker.failed(ctx.workspace, spec.slot)
            rel = _rel(str(answer["stale"]), ctx.root)
            notes.append(f"jest: {rel}, which its configuration loaded, changed; started again")
            if attempt == 1:
                continue
            return None
        pid = warm.record.pid if warm.record else "?"
        notes.append(
            f"jest: the warm runner (pid {pid}, jest {answer.get('version', '?')}, its "
            f"configuration loaded) ran the tests in its workers in "
            f"{time.monotonic() - started:.2f} s"
        )
        if (config := spec.settings["$init"].get("transpileTsConfig")) is not None:
            notes.append(
                f"jest: {config} is HEAD's own, as is what its type check reads: ts-node "
                "compiled it without that check (an error there would be HEAD's too)"
            )
        return await answered(
            [*spec.argv, *args],
            int(answer["code"]),
            str(answer.get("output", "")),
            ctx.spool(_RUNG, ".warm.out"),
            started,
            ctx.config.output_cap_bytes,
        )
    return None


def slot(ws: Workspace) -> str:
    """The warm checkers' slot of the workspace's warm jest."""
    return f"jest:{ws.path}"


def warmed(project: NodeProject) -> list[tuple[Workspace, Path]]:
    """Each workspace whose tests jest runs (29 or later, from the project's own
    `node_modules`), with its jest."""
    found = [(ws, project.bin(ws, "jest")) for ws in project.workspaces if ws.runner() == "jest"]
    return [(ws, jest) for ws, jest in found if jest is not None and _major(jest) >= 29]


async def warm_up(ctx: RungContext, project: NodeProject) -> list[str]:
    """Start the warm jest of every workspace `warmed` lists, at background priority (the
    warm-up's step for a Node project): what it started."""
    done: list[str] = []
    for ws, jest in await anyio.to_thread.run_sync(warmed, project):
        spec = await anyio.to_thread.run_sync(spec_for, ctx, project, ws, jest)
        warm, said = await warm_checker.get(
            ctx.workspace, ws.path, spec, "", may_start=True, make=_make, background=True
        )
        where = ws.rel or "the project"
        if warm is None:
            done.append(f"jest did not start in {where} ({said})")
            continue
        pid = warm.record.pid if warm.record else "?"
        done.append(f"jest runner pid {pid} ({where})")
    return done
