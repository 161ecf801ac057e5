"""What the Rust rungs share: the preamble (no work, a configured command, no cargo), the
crate graph of the climb, and a cargo compiler run whose findings are settled against the
same run on HEAD's content.

HEAD's run happens in HEAD's export (`HeadTree.export`, the folder the Python checks use)
with its own `CARGO_TARGET_DIR` in the habitat's state folder, kept across commits, and no
debug info for the workspace's own crates (`head_command`). Its registry dependencies are
built as the user builds them, so the units the user's `target/` (or another of the
habitat's target folders) holds are copied in and found fresh (dep_units.py); the rest are
built there once, so a later base check recompiles only the workspace's crates."""

from __future__ import annotations

import functools
import logging
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath

import anyio.to_thread

from ...baseline import BaseResult, fingerprint
from ...command import Outcome
from ...head import HeadTree
from ...models import Diagnostic, RungName, RungResult, RungState
from ...rungs.compare import cache_of, settle
from ...rungs.context import RungContext, from_outcome, skipped
from ...rungs.preamble import before_the_tool
from .change import export_ahead, only_test_code_of
from .dep_units import registry_packages, seed, seed_rustc_info
from .messages import BUILD_SCRIPT, FORMAT, compiler_messages
from .metadata import METADATA_ARGV, CrateGraph, MetadataError, parse_metadata

__all__ = [
    "EVERY_UNIT",
    "TOOL_NOTE",
    "build_verdict",
    "cargo_rung",
    "check_env",
    "check_target_dir",
    "clippy_covered",
    "crate_graph",
    "graph_note",
    "head_cached",
    "head_command",
    "head_env",
    "head_side",
    "head_target_dir",
    "lib_target_dir",
    "on_head",
    "packages",
    "remember_clippy",
    "run_compiler",
    "seed_target",
]

logger = logging.getLogger(__name__)

TOOL_NOTE = "rust toolchain: {tool}"
EVERY_UNIT = ("--all-targets", "--keep-going")
"""What a clippy or check run covers, here and on HEAD alike: every target, and every unit
whatever another one's errors (cargo stops scheduling at the first failed unit otherwise,
in an order of its own: unicase 2.8.1, which denies warnings under `cfg(test)`, gave HEAD's
check without the lib's warnings and the tree's with them, and its lint read as new)."""
NO_CARGO = "cargo is not on PATH; install Rust with rustup (https://rustup.rs)"
_GRAPHS: dict[tuple[str, str], tuple[str, CrateGraph]] = {}
"""(root, `_graph_key`) → (the climb that ran `cargo metadata`, the crate graph)."""

_ASKING: dict[tuple[str, str], anyio.Event] = {}
"""(root, `_graph_key`) → set once the `cargo metadata` under way for it ends: the rungs that
start together (test.scoped beside diagnose.files) wait for one run instead of each making
its own (0.1-0.2 s of a first verify at load 25)."""

_CLIPPED: dict[tuple[str, str], tuple[frozenset[str], RungResult]] = {}
"""(ladder id, root) → the crates `diagnose.files` ran clippy on (`--all-targets`) and its
result: clippy is rustc's check plus lints, so `compile.project` of those crates in the
same climb would check again what was just checked."""

RustRung = Callable[[RungContext, CrateGraph], Awaitable[RungResult]]


def head_target_dir(ctx: RungContext) -> Path:
    return ctx.workspace.state_dir / "rust" / "head-target"


def check_target_dir(ctx: RungContext) -> Path:
    return ctx.workspace.state_dir / "rust" / "check-target"


def lib_target_dir(ctx: RungContext) -> Path:
    return ctx.workspace.state_dir / "rust" / "lib-target"


async def seed_target(
    ctx: RungContext, graph: CrateGraph, target: Path, *, linked: bool = False
) -> None:
    """Before a cargo run in `target` (one of the habitat's target folders): the registry
    dependencies' units the user's build folder or the habitat's other target folders hold
    and `target` lacks, copied in (dep_units.py), and cargo's cache of the compiler's
    answers when `target` has none; `linked`: the libraries compiled for linking too (a
    build or a test build; a check or clippy needs none of them)."""
    user = graph.build_dir or ctx.root / "target"
    folders = [user, check_target_dir(ctx), lib_target_dir(ctx), head_target_dir(ctx)]
    sources = [f / "debug" for f in folders if f != target]

    def copy() -> int:
        seed_rustc_info(target, [f for f in folders if f != target])
        packages = registry_packages(ctx.root / "Cargo.lock", graph.crates)
        return seed(target / "debug", sources, packages, linked=linked)

    try:
        # Abandoned on cancel: it ends on its own (a bounded wait for the lock, then copies).
        copied = await anyio.to_thread.run_sync(copy, abandon_on_cancel=True)
    except OSError:
        logger.debug("could not copy dependency units into %s", target, exc_info=True)
        return
    if copied:
        logger.debug("copied %d dependency units into %s", copied, target)


def check_env(ctx: RungContext) -> dict[str, str]:
    """The environment of the working tree's clippy and check runs: the habitat's own target
    folder. In the project's `target/` they held cargo's lock on it while the tests, started
    beside them, waited ("Blocking waiting for file lock on build directory"); and a check
    builds nothing the tests could reuse (no code is generated). Its registry dependencies
    are checked there once; the workspace's crates incrementally, as in `target/`."""
    return {"CARGO_TARGET_DIR": str(check_target_dir(ctx))}


def head_env(ctx: RungContext) -> dict[str, str]:
    """The environment of every cargo run on HEAD: its own target folder."""
    return {"CARGO_TARGET_DIR": str(head_target_dir(ctx))}


def _no_debug_info(graph: CrateGraph) -> list[str]:
    return [
        arg
        for name in sorted(graph.crates)
        for profile in ("dev", "test")
        for arg in ("--config", f'profile.{profile}.package."{name}".debug=0')
    ]


async def head_command(ctx: RungContext, rung: RungName, argv: Sequence[str]) -> list[str]:
    """`argv` (a cargo command) as it runs on HEAD, with HEAD's target folder given the
    dependencies' units found elsewhere (`seed_target`). The workspace's own crates build
    there with no debug info (`debug = 0` in the dev and test profiles for them alone, over
    the project's own): those binaries are run once for their outcomes and never debugged,
    and debug info is most of a cold debug build's time (strsim's lib tests built from
    nothing: 6.3-11.3 s -> 4.1-6.0 s at load 18). The code is the same (debug assertions and
    overflow checks are their own settings); only a backtrace of a failure on HEAD would
    have no file names in it. The dependencies keep the project's profile, which is what
    makes the user's units of them fit (the same units, the same hashes)."""
    graph = await crate_graph(ctx, rung)
    if isinstance(graph, RungResult) or not argv or argv[0] != "cargo":
        return list(argv)
    checks = len(argv) > 1 and argv[1] in ("check", "clippy")
    await seed_target(ctx, graph, head_target_dir(ctx), linked=not checks)
    return [argv[0], *_no_debug_info(graph), *argv[1:]]


def _graph_key(ctx: RungContext) -> str:
    """What `cargo metadata --no-deps` reads, as a key: HEAD and the content of every touched
    manifest or cargo config (a manifest nobody touched is HEAD's; a new crate's manifest is
    a touched file). Outside git, or with no commit yet: this climb alone."""
    snapshot = ctx.snapshot
    if not snapshot.in_git or snapshot.head is None:
        return f"climb {ctx.ladder_id} {snapshot.id}"
    read = sorted(
        f"{rel}={digest}"
        for rel, digest in snapshot.hashes.items()
        if PurePosixPath(rel).name == "Cargo.toml" or ".cargo" in PurePosixPath(rel).parts
    )
    return " ".join([snapshot.head, *read])


def graph_note(ctx: RungContext) -> list[str]:
    """Says so when the climb's crate graph is an earlier climb's `cargo metadata`."""
    seen = _GRAPHS.get((str(ctx.root), _graph_key(ctx)))
    if seen is None or seen[0] == ctx.ladder_id:
        return []
    return [f"crate graph: cargo metadata of climb {seen[0]} (no manifest changed since)"]


async def crate_graph(ctx: RungContext, rung: RungName) -> CrateGraph | RungResult:
    """The project's crates, or the rung's error result when cargo cannot describe them:
    `cargo metadata` again only when HEAD or a touched manifest changed (`_graph_key`)."""
    key = (str(ctx.root), _graph_key(ctx))
    while key not in _GRAPHS and key in _ASKING:
        await _ASKING[key].wait()
    if key in _GRAPHS:
        _GRAPHS[key] = _GRAPHS.pop(key)  # the newest at the end
        return _GRAPHS[key][1]
    _ASKING[key] = asked = anyio.Event()
    try:
        return await _ask_metadata(ctx, rung, key)
    finally:
        del _ASKING[key]
        asked.set()


async def _ask_metadata(
    ctx: RungContext, rung: RungName, key: tuple[str, str]
) -> CrateGraph | RungResult:
    outcome = await ctx.run(rung, METADATA_ARGV, suffix=".metadata.out", reap_leftovers=False)
    failed = f"cargo metadata failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    if outcome.exit_code == 0:
        try:
            graph = await anyio.to_thread.run_sync(parse_metadata, outcome.text, ctx.root)
        except MetadataError as exc:
            failed = str(exc)
        else:
            while len(_GRAPHS) >= 16:
                del _GRAPHS[next(iter(_GRAPHS))]
            _GRAPHS[key] = (ctx.ladder_id, graph)
            return graph
    return from_outcome(ctx, rung, outcome, tool="cargo metadata", state="error", reason=failed)


def cargo_rung(
    rung: RungName, *, no_work: Callable[[RungContext], str | None] | None = None
) -> Callable[[RustRung], Callable[[RungContext], Awaitable[RungResult]]]:
    """The Rust rungs' preamble: no work → skipped (`no_work` says why); a command the
    project configured → it runs instead; no cargo → skipped, naming it; else the rung,
    which gets the crate graph."""

    def wrap(body: RustRung) -> Callable[[RungContext], Awaitable[RungResult]]:
        @functools.wraps(body)
        async def run(ctx: RungContext) -> RungResult:
            answered = await before_the_tool(ctx, rung, no_work)
            if answered is not None:
                return answered
            if shutil.which("cargo", path=ctx.process_env().get("PATH")) is None:
                return skipped(ctx, rung, NO_CARGO, missing="cargo")
            export_ahead(ctx)
            async with anyio.create_task_group() as beside:
                # Read beside `cargo metadata`: the crates the change reaches need both.
                beside.start_soon(only_test_code_of, ctx)
                graph = await crate_graph(ctx, rung)
            if isinstance(graph, RungResult):
                return graph
            return await body(ctx, graph)

        return run

    return wrap


def remember_clippy(ctx: RungContext, crates: Sequence[str], result: RungResult) -> None:
    while len(_CLIPPED) >= 16:
        del _CLIPPED[next(iter(_CLIPPED))]
    _CLIPPED[(ctx.ladder_id, str(ctx.root))] = (frozenset(crates), result)


def clippy_covered(ctx: RungContext, crates: Sequence[str]) -> RungResult | None:
    """`diagnose.files`' green clippy result of this climb when it checked every crate of
    `crates` (all their targets), else None."""
    seen = _CLIPPED.get((ctx.ladder_id, str(ctx.root)))
    if seen is None or not set(crates) <= seen[0] or seen[1].state != "green":
        return None
    return seen[1]


def packages(crates: Sequence[str]) -> list[str]:
    return [arg for name in crates for arg in ("-p", name)]


def _settled_state(diagnostics: list[Diagnostic], exit_code: int | None) -> RungState | None:
    """cargo exits 101 when the compiler reported errors; any other failure is cargo's."""
    errors = any(d.severity == "error" for d in diagnostics)
    if exit_code == 0:
        return "green"
    if exit_code == 101 and errors:
        return "red"
    return "error" if exit_code is not None else None


async def run_compiler(
    ctx: RungContext,
    rung: RungName,
    argv: list[str],
    *,
    tool: str,
    keep: Callable[[Diagnostic], bool] = lambda d: True,
    notes: list[str],
    extra_env: Mapping[str, str] | None = None,
    outcome: Outcome | None = None,
) -> RungResult:
    """`argv` (a cargo compiler command with `--message-format=json`) with `extra_env`, its
    findings that `keep` keeps, settled against the same command on HEAD (in HEAD's own
    target folder, whatever `extra_env` names). `outcome`: the run of `argv`, made already
    (lib_check.run_judged)."""
    if outcome is None:
        outcome = await ctx.run(rung, argv, reap_leftovers=False, extra_env=extra_env)
    found = compiler_messages(outcome.text, ctx.root, tool=tool)
    diagnostics = [d for d in found if keep(d)]
    state = _settled_state(found, outcome.exit_code)
    result = from_outcome(
        ctx,
        rung,
        outcome,
        tool=tool,
        state=state,
        diagnostics=diagnostics,
        notes=[TOOL_NOTE.format(tool=tool), *notes],
    )
    if result.state == "error" and result.reason is None:
        result.reason = f"{tool} failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    elif result.state == "red":
        errors = [d for d in diagnostics if d.severity == "error"]
        if errors:
            first = errors[0]
            result.reason = f"{len(errors)} {tool} error(s), first {first.file}:{first.line}"
    base_env = head_side(extra_env)

    async def base(head: HeadTree) -> tuple[BaseResult, bool] | str:
        return await on_head(ctx, rung, head, argv, tool=tool, keep=keep, env=base_env)

    return build_verdict(await settle(ctx, result, base))


def build_verdict(result: RungResult) -> RungResult:
    """`result` (settled against HEAD) said as what happened when a build script failed:
    a build failure at the script, not "N findings"; one failing at HEAD too leaves the
    crates it builds unchecked on both sides, which is neither green nor the change's red
    (`error`, the build could not run)."""
    scripts = [d for d in result.diagnostics if d.code == BUILD_SCRIPT and d.severity == "error"]
    if not scripts:
        return result
    new = [d for d in scripts if not d.preexisting]
    first = (new or scripts)[0]
    where = f"{first.file}:{first.line}" if first.line else (first.file or "a dependency")
    if result.state == "red" and new:
        errors = [d for d in result.diagnostics if d.severity == "error" and not d.preexisting]
        more = len(errors) - len(new)
        also = f"; and {more} new compile error(s)" if more else ""
        count = f" (1 of {len(new)} build scripts)" if len(new) > 1 else ""
        result.reason = f"build failure at {where}{count}: {first.message}{also}"
    elif result.state == "green":
        result.state = "error"
        result.reason = (
            f"build failure at {where}, at HEAD too (not the change's): {first.message}; "
            "what it builds was not checked"
        )
    return result


def head_side(env: Mapping[str, str] | None) -> dict[str, str]:
    """What of a working-tree run's environment HEAD's run of the same command takes: all
    but its target folder (HEAD builds in its own, `head_env`)."""
    return {k: v for k, v in (env or {}).items() if k != "CARGO_TARGET_DIR"}


def head_cached(ctx: RungContext, head: HeadTree, argv: list[str], env: Mapping[str, str]) -> bool:
    """Blocking: HEAD's run of `argv` is in the cache (else HEAD is exported for it)."""
    return _prepare_head(ctx, head, argv, env)[1] is None


def _prepare_head(
    ctx: RungContext, head: HeadTree, argv: list[str], env: Mapping[str, str]
) -> tuple[str, Path | None]:
    # Blocking: the cache key (HEAD, argv, its environment, the lock file now) and, on a
    # miss, HEAD's export with the working tree's lock file where HEAD has none (a library
    # that ignores it), so both runs build the same dependency versions.
    lock = ctx.root / "Cargo.lock"
    key = fingerprint(
        f"cargo findings {FORMAT}",
        head.head,
        *argv,
        *sorted(f"{k}={v}" for k, v in env.items()),
        lock,
    )
    if cache_of(ctx).get(key) is not None:
        return key, None
    export = head.export()
    if lock.is_file() and not (export / "Cargo.lock").exists():
        shutil.copyfile(lock, export / "Cargo.lock")
    return key, export


async def on_head(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    argv: list[str],
    *,
    tool: str,
    keep: Callable[[Diagnostic], bool],
    env: Mapping[str, str],
    suffix: str = ".base.out",
) -> tuple[BaseResult, bool] | str:
    """`argv` on HEAD (its export, its target folder), or its cached answer: (the findings
    `keep` keeps, cached), or why it could not run."""
    key, export = await anyio.to_thread.run_sync(_prepare_head, ctx, head, argv, env)
    if export is None:
        hit = cache_of(ctx).get(key)
        if hit is not None:
            return hit, True
        export = await anyio.to_thread.run_sync(head.export)
    target = {**env, **head_env(ctx)}
    command = await head_command(ctx, rung, argv)
    outcome = await ctx.run(
        rung, command, suffix=suffix, cwd=export, extra_env=target, reap_leftovers=False
    )
    if outcome.timed_out or outcome.exit_code not in (0, 101):
        return f"{tool} failed on HEAD (exit {outcome.exit_code}): {outcome.tail.strip()[-200:]}"
    findings = [d for d in compiler_messages(outcome.text, export, tool=tool) if keep(d)]
    if outcome.exit_code == 101 and not any(d.severity == "error" for d in findings):
        # 101 with no error of the compiler: cargo itself refused (a crate HEAD lacks).
        return f"{tool} could not run on HEAD: {outcome.tail.strip()[-200:]}"
    result = BaseResult(findings=findings, exit_code=outcome.exit_code)
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, result)
    return result, False
