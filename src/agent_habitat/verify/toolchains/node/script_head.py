"""Red means the change did it, for a workspace's whole `test` script (a runner with no
affected-test mode, and `test.full`): its console is all it reports, so its failures are
read from it (vitest's `FAIL file > test` lines, TAP's `not ok`), and a red run is compared
with the same script run on HEAD's export (`node_modules` linked in, a git index of HEAD's
files of its own, as rungs/head_tests.py and head_tests.py do for the runners we drive).

* Failures that name a test (`file > name`; TAP's `# name: description`, its number and its
  expected/actual left out, as they move with the change) are keyed by that name: one HEAD
  fails as often is already failing (listed, not red); rungs/head_tests.py `settle_tests`
  keeps HEAD's answer per (HEAD, script, installed dependencies), a whole run's, so a later
  red at that HEAD runs nothing there. A failure that names no test (a file that did not
  load, jest's console `FAIL file`) is never matched: it counts as the change's. A script
  that fails on HEAD naming no test (its pretest fails there) gives no baseline: each
  failure counts as new, and the notes say why.
* A script that fails naming no test at all (its pretest's lint or type check, a build
  step) runs on HEAD too (cached per HEAD, script and installed dependencies): failing
  there the same way (exit code and last lines), the failure is not the change's, and none
  of its tests ran to judge the change either, so the rung is `error`, not red (a pretest's
  `tsc -p .` that fails at HEAD made ci_parity's test.full red whatever the change did).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import anyio.to_thread

from ....workspace import write_private
from ...baseline import fingerprint
from ...command import Outcome
from ...head import HeadTree
from ...models import Diagnostic, RungResult
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun, settle_tests
from .common import head_with_modules
from .detect import NodeProject, Workspace
from .parsers import parse_fail_lines
from .tap import parse_tap_keyed

__all__ = ["script_failures", "settle_script"]

_ENV = {"FORCE_COLOR": "0"}
_SAME_LINES = 5
"""The last output lines two failing runs of a script must share to fail the same way."""

_INSTALLED = (
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lockb",
    "node_modules/.package-lock.json",
    "node_modules/.modules.yaml",
    "node_modules/.yarn-integrity",
)
"""What says which dependencies are installed: HEAD's run of a script is kept while they stay."""


def script_failures(text: str, root: Path, source: str) -> list[tuple[Diagnostic, str | None]]:
    """A test script's failures from its console, each with its key (None when it names
    no test): vitest's and jest's FAIL lines, else TAP's `not ok`."""
    found = parse_fail_lines(text, root, source)
    if found:
        return [(d, d.message if " > " in d.message else None) for d in found]
    return [(diag, key) for diag, key in parse_tap_keyed(text, root, source)]


def _installed(project: NodeProject) -> list[Path]:
    return [project.root / name for name in _INSTALLED]


async def _run_on_head(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    head: HeadTree,
    argv: list[str],
    result: RungResult,
) -> tuple[Outcome, Path]:
    """The script run in HEAD's export, in the workspace's folder there; and the export."""
    export = await anyio.to_thread.run_sync(head_with_modules, head, project)
    folder = export / ws.rel if ws.rel else export
    env = dict(_ENV)
    git_dir = await anyio.to_thread.run_sync(head.git_index, export)
    if git_dir is not None:  # `git ls-files` answers there as in the checkout
        env.update(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(export))
    ran = await ctx.run(result.rung, argv, suffix=".head.out", cwd=folder, extra_env=env)
    return ran, export


async def settle_script(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    argv: list[str],
    outcome: Outcome,
    result: RungResult,
    keys: dict[str, str],
) -> RungResult:
    """A red run of the script, compared with HEAD (see the module); `keys` maps each
    failure's message to its key (failures that name no test are not in it)."""
    if result.state != "red":
        return result
    if not result.diagnostics:
        return await _failing_at_head(ctx, project, ws, argv, outcome, result)

    async def on_head(head: HeadTree, asked: list[str]) -> HeadRun | str:
        ran, export = await _run_on_head(ctx, project, ws, head, argv, result)
        if ran.timed_out or ran.signal is not None:
            return f"the test script did not end on HEAD ({ran.signal or 'timed out'})"
        found = script_failures(ran.text, export, result.tool or "test script")
        failed = Counter(key for _, key in found if key is not None)
        if ran.exit_code != 0 and not failed:
            return (
                f"the test script failed on HEAD naming no test (exit {ran.exit_code}): "
                f"{ran.tail.strip()[-200:]}"
            )
        return HeadRun(failed=failed, whole=True)

    cache_key = fingerprint(
        "node test script's named failures on HEAD",
        ctx.snapshot.head or "",
        *argv,
        ws.rel,
        *_installed(project),
    )
    return await settle_tests(
        ctx,
        result,
        cache_key=cache_key,
        key_of=lambda diag: keys.get(diag.message),
        run_on_head=on_head,
    )


def _last_lines(text: str, folder: Path) -> list[str]:
    lines = [ln.rstrip() for ln in text.replace(str(folder), "<root>").splitlines()]
    return [ln for ln in lines if ln][-_SAME_LINES:]


async def _failing_at_head(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    argv: list[str],
    outcome: Outcome,
    result: RungResult,
) -> RungResult:
    """A script that failed naming no failing test: `error` when HEAD fails the same way."""
    head = head_of(ctx)
    if isinstance(head, str):
        return result
    key = fingerprint(
        "node test script on HEAD, in a git index of its own",
        head.head,
        *argv,
        ws.rel,
        *_installed(project),
    )
    path = ctx.workspace.state_dir / "baseline" / "node-scripts" / key[:2] / f"{key}.json"
    known = await anyio.to_thread.run_sync(_load_run, path)
    if known is None:
        ran, export = await _run_on_head(ctx, project, ws, head, argv, result)
        if ran.timed_out or ran.signal is not None:
            return result
        known = (ran.exit_code, _last_lines(ran.tail, export))
        await anyio.to_thread.run_sync(_save_run, path, known)
    result.baseline = f"HEAD {head.head[:12]}"
    if known != (outcome.exit_code, _last_lines(outcome.tail, ctx.root)):
        result.notes.append(
            f"node: on HEAD {head.head[:12]} the same script ended otherwise (exit {known[0]}): "
            "not the same failure, so it stays red"
        )
        return result
    result.state = "error"
    result.reason = (
        f"{result.tool} fails on HEAD {head.head[:12]} too, the same way (exit "
        f"{outcome.exit_code}), naming no failing test: not the change's, and none of its "
        "tests was checked; fix that failure (the output's end) to judge the change"
    )
    return result


def _load_run(path: Path) -> tuple[int | None, list[str]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        code, last = data["exit_code"], data["last"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (code is None or isinstance(code, int)) or not isinstance(last, list):
        return None
    return code, [str(line) for line in last]


def _save_run(path: Path, run: tuple[int | None, list[str]]) -> None:
    write_private(path, json.dumps({"exit_code": run[0], "last": run[1]}))
