"""`diagnose.files`' warm eslint: one long-lived Node process per linted configuration folder,
on the project's own eslint (its Node API, eslint_warm.cjs), owned by the habitat process
that started it with the warm checkers' lifecycle (rungs/warm_checker.py: a status file
`habitat status` lists, stopped with its owner, started again when it died or its
configuration changed, the rung's notes saying so).

A cold `eslint --format json <files>` loads eslint, the configuration and its plugins on
every verify (19 s on ufo at load 40); the warm one lints the touched files with them loaded.
Its answer is the JSON formatter's report, parsed by the same `parse_eslint`, so a warm
finding and a cold one compare equal (tests/e2e/test_node_eslint_warm.py holds it against
the CLI). What a warm answer depends on besides the linted files: the folder's eslint
configuration files, the `package.json`s, the lockfiles and what the package manager wrote
into node_modules, eslint's own `package.json` (a change starts a new process), every local
module the configuration imported (the process answers `stale` and is started again), and
which files the change added or deleted (a plugin's resolver may remember that a file was
there). HEAD's content of a file is linted by the same process (`lintText` with its path).
A one-shot `habitat verify` keeps no server and runs the CLI cold.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio.to_thread

from ...rungs import warm_checker
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from ...rungs.lsp import LspError
from ...rungs.warm_checker import ServerSpec, WarmChecker
from .detect import NodeProject

__all__ = ["SCRIPT", "EslintWarm", "lint_warm", "linted", "slot", "spec_for", "warm_up"]

SCRIPT = Path(__file__).with_name("eslint_warm.cjs")
_LOCKS = ("package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb")
# What npm, pnpm and yarn write into node_modules on every install.
_INSTALLED = (".package-lock.json", ".modules.yaml", ".yarn-integrity", ".yarn-state.yml")
_CONFIGS = (".eslintrc", "eslint.config", ".eslintignore")


def _watched(project: NodeProject, folder: Path, eslint: Path) -> list[str]:
    rel = os.path.relpath
    names = sorted(p.name for p in folder.glob("*") if p.name.startswith(_CONFIGS))
    watched = [*names, "package.json", rel(project.root / "package.json", folder)]
    watched += [rel(project.root / n, folder) for n in _LOCKS if (project.root / n).is_file()]
    for modules in dict.fromkeys((folder / "node_modules", project.root / "node_modules")):
        watched += [rel(modules / n, folder) for n in _INSTALLED if (modules / n).is_file()]
    package = eslint.resolve().parent.parent / "package.json"  # eslint/bin/eslint.js
    watched.append(rel(package, folder))
    return sorted(dict.fromkeys(watched))


def _rel(path: str, root: Path) -> str:
    return os.path.relpath(path, root)


def _structure(ctx: RungContext) -> list[str]:
    """The change's added and deleted paths (blocking)."""
    deleted = set(ctx.snapshot.deleted)
    head = head_of(ctx)
    if isinstance(head, str):
        return sorted(deleted)
    at_head = head.blobs([p for p in ctx.touched if p not in deleted])
    return sorted(deleted | {p for p in ctx.touched if p not in deleted and p not in at_head})


def spec_for(
    ctx: RungContext, project: NodeProject, folder: Path, eslint: Path, structure: list[str]
) -> ServerSpec:
    return ServerSpec(
        tool="eslint",
        argv=["node", str(SCRIPT)],
        env=ctx.process_env(),
        settings={"$init": {"cwd": str(folder)}, "$structure": structure},
        slot=slot(folder),
        config_files=tuple(_watched(project, folder, eslint)),
        kind="linter",
    )


class EslintWarm(WarmChecker):
    """The warm eslint of one configuration folder: `WarmChecker`'s lifecycle,
    eslint_warm.cjs's protocol."""

    def start(self) -> None:
        client = self.spawn("eslint.log", lambda _section: None)
        params = {"processId": os.getpid(), **self.spec.settings["$init"]}
        self.initialize(client, params, warm_checker.START_TIMEOUT_S)  # config loaded here
        self.started()

    def lint(self, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """eslint's answer for `{files}` on disk or `{texts}` (blocking)."""
        client = self.client
        assert client is not None
        with self._guard:
            answer = client.request("habitat/lint", params, timeout)
            self.checks += 1
        if not isinstance(answer, dict) or not (
            isinstance(answer.get("report"), str) or isinstance(answer.get("stale"), str)
        ):
            raise LspError(f"habitat/lint: unexpected answer {str(answer)[:200]}")
        return answer


def _make(workspace: Any, root: Path, spec: ServerSpec, key: str) -> WarmChecker:
    return EslintWarm(workspace, root, spec, key)


async def _get(
    ctx: RungContext, spec: ServerSpec, folder: Path, may_start: bool, background: bool = False
) -> tuple[EslintWarm | None, str | None]:
    warm, said = await warm_checker.get(
        ctx.workspace, folder, spec, "", may_start=may_start, make=_make, background=background
    )
    return (warm if isinstance(warm, EslintWarm) else None), said


async def lint_warm(
    ctx: RungContext,
    project: NodeProject,
    folder: Path,
    eslint: Path,
    params: dict[str, Any],
    notes: list[str],
    *,
    may_start: bool = True,
) -> dict[str, Any] | None:
    """The warm eslint's answer (`report`, `errors`, `version`) for `params` (`files`, or
    `texts` for HEAD's content), started first when `may_start` and there is none; None
    (and why, in `notes`) when the CLI must run cold."""
    if not ctx.config.warm_checker:
        notes.append("eslint ran cold: [tool.habitat.ladder] warm_checker = false")
        return None
    one_shot = ctx.hooks is None  # a one-shot climb keeps no server
    structure = await anyio.to_thread.run_sync(_structure, ctx)
    spec = spec_for(ctx, project, folder, eslint, structure)
    for attempt in (1, 2):
        warm, said = await _get(ctx, spec, folder, may_start and not one_shot)
        if said:
            notes.append(said)
        if warm is None:
            if one_shot:
                notes.append("eslint ran cold: a one-shot verify keeps no warm linter")
            return None
        started = time.monotonic()
        try:
            answer = await anyio.to_thread.run_sync(
                warm.lint, params, ctx.config.timeout_s, abandon_on_cancel=True
            )
        except (LspError, OSError) as exc:
            await warm_checker.failed(ctx.workspace, spec.slot)
            notes.append(f"the warm eslint failed ({str(exc)[-300:]}); stopped, ran eslint cold")
            return None
        if "stale" in answer:
            await warm_checker.failed(ctx.workspace, spec.slot)
            rel = _rel(str(answer["stale"]), ctx.root)
            notes.append(f"eslint: {rel}, which the configuration loaded, changed; started again")
            if attempt == 1:
                continue
            return None
        pid = warm.record.pid if warm.record else "?"
        what = "HEAD's content" if "texts" in params else "the touched files"
        notes.append(
            f"eslint: the warm linter (pid {pid}, eslint {answer.get('version', '?')}) linted "
            f"{what} in {time.monotonic() - started:.2f} s"
        )
        return answer
    return None


def slot(folder: Path) -> str:
    """The warm checkers' slot of the warm eslint of a configuration folder."""
    return f"eslint:{folder}"


def linted(project: NodeProject) -> dict[Path, Path]:
    """Each folder with an eslint configuration, with the project's eslint for it."""
    out: dict[Path, Path] = {}
    for ws in project.workspaces:
        found = project.linter(ws)
        eslint = project.bin(ws, "eslint")
        if found is not None and found[0] == "eslint" and eslint is not None:
            out.setdefault(found[1], eslint)
    return out


async def warm_up(ctx: RungContext, project: NodeProject) -> list[str]:
    """Start the warm eslint of every folder with an eslint configuration and the project's
    eslint, at background priority (the warm-up's step for a Node project): what it
    started."""
    done: list[str] = []
    for folder, eslint in linted(project).items():
        structure = await anyio.to_thread.run_sync(_structure, ctx)
        spec = spec_for(ctx, project, folder, eslint, structure)
        warm, said = await _get(ctx, spec, folder, True, background=True)
        if warm is None:
            done.append(f"eslint did not start ({said})")
            continue
        pid = warm.record.pid if warm.record else "?"
        where = folder.relative_to(ctx.root).as_posix()
        done.append(f"eslint linter pid {pid} ({'the project' if where == '.' else where})")
    return done
