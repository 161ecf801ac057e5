"""A compile error judged first by the crates' own code's check, on the tree and on HEAD.

Red means the change did it: a compile error is the change's only if HEAD does not have it.
The whole answer is HEAD's run of the rung's own command (clippy of every target, or the
tests' build), which the first compile error at a HEAD waited for from nothing: scopeguard's
verdict 5.4 s against the user's `cargo test` 0.9 s (issue 27). But most compile errors are
in a library's or a binary's own code, and `cargo check --lib --bins` (rustc, no lints, no
test harness, one unit per target) of the crates the change reaches compiles that code alone:
from nothing 0.3-0.8 s where clippy of every target takes 1.2-15.8 s (scopeguard, unicase,
strsim, unicode-width at load 11-15). Run on the tree (in a target folder of its own, so it
waits for no other cargo's lock) and on HEAD (its export and target folder, the answer cached
per HEAD as every compiler run there is), its errors are settled one for one as any compiler
rung's (verify/baseline.py). A new one decides the climb: red, with that check's findings.
Anything else decides nothing and the rung's own comparison follows: no error there (the
errors are a test target's, an example's, or a lint only clippy denies), each of them at
HEAD too, or either run failing for another reason.

The tree's side is most often told already: a failed `cargo test` build names the units that
failed, and build_evidence.py tells from its output the errors of the crates' libraries and
binaries as built for use (what `cargo check --lib --bins` checks) from their test
harnesses'. When this climb's tests' build (`tests_build`) ended and told them all, they are
the tree's side and no check runs on the tree (HEAD's starts at the first compile error, as
before). When it did not tell them all (an error said by one of a library's two units only,
units cargo never built, a crate whose dev-dependencies by path may turn on its own
features, a build that did not end), the tree's check runs as before.

The check starts at the first compile error of clippy's run or the tests' build: started with
clippy's run in the first climb at a HEAD, its two compiles (the tree's and HEAD's) took the
CPU of the tests' build, the climb's longest path (strsim's green first verify 12.6 s against
7.7 s at load 19). HEAD's side alone starts earlier, with the tests' build, in the first climb
at a HEAD (`head_early`): the tree's side is most often told by that build, so a first compile
error waited for HEAD's whole check after the build's first error (scopeguard: 0.6-1.3 s of a
1.3-2.8 s verdict against `cargo test`'s 0.3-0.7 s). It stops once the tree's build has built
the crates' libraries and binaries (then it has nothing to judge), so a build that compiles
pays for it only while those compile. Both rungs that meet a project's compile errors ask the
check (diagnose.files' clippy, test.scoped's build); one climb runs it once: the first asks,
a later one waits for that answer (or asks again, when the first was stopped before it had
one), and HEAD's side started early is taken when it has an answer."""

from __future__ import annotations

import contextlib
import functools
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from ...baseline import BaseResult, new_whatever_head_has, summarize
from ...command import Outcome
from ...head import HeadTree
from ...models import Diagnostic, RungName, RungResult
from ...rungs.compare import head_of, lines_now, mark_against_head
from ...rungs.context import RungContext
from ...stopping import ending_red
from .build_evidence import PlainBuilds, PlainErrors, plain_errors
from .cargo import (
    build_verdict,
    head_cached,
    head_side,
    lib_target_dir,
    on_head,
    packages,
    seed_target,
)
from .change import affected_of
from .messages import compiler_messages
from .metadata import CrateGraph
from .spool_watch import BUILD_FINISHED, compile_error, said, said_line

__all__ = [
    "TOOL",
    "LibCheck",
    "argv_of",
    "decided_by",
    "head_check",
    "head_early",
    "lib_target_dir",
    "new_lib_errors",
    "run_judged",
    "tests_build",
]

TOOL = "cargo check"
_ARGV = ("cargo", "check", "--message-format=json", "--keep-going")
_UNITS = ("--lib", "--bins")
"""Each crate's library and binaries as they are built for use (not as tests): cargo takes
the ones a crate has, and refuses only a selection none of them has."""


@dataclass
class LibCheck:
    """A new compile error in the crates' own code: the check's findings, settled."""

    argv: list[str]
    diagnostics: list[Diagnostic]
    baseline: str
    how: str = ""
    """What judged it (the note's words)."""
    unsettled: int = 0
    """The tree's other errors, not compared with HEAD (`_beyond_head` decided without it)."""


@dataclass
class _Asked:
    ended: anyio.Event = field(default_factory=anyio.Event)
    answered: bool = False
    answer: LibCheck | None = None


_ASKED: dict[tuple[str, str], _Asked] = {}
"""(ladder id, root) → the climb's check, under way or answered."""


def _error(d: Diagnostic) -> bool:
    return d.severity == "error"


async def new_lib_errors(ctx: RungContext, rung: RungName, graph: CrateGraph) -> LibCheck | None:
    """The climb's new compile errors in its crates' own code, or None when that check
    decides nothing (see the module)."""
    key = (ctx.ladder_id, str(ctx.root))
    while (asked := _ASKED.get(key)) is not None:
        if asked.answered:
            return asked.answer
        await asked.ended.wait()  # its asker gone without an answer: the key is gone too
    asked = _ASKED[key] = _Asked()
    while len(_ASKED) > 16:
        del _ASKED[next(iter(_ASKED))]
    try:
        asked.answer = await _check(ctx, rung, graph)
        asked.answered = True
    finally:
        if not asked.answered and _ASKED.get(key) is asked:
            del _ASKED[key]
        asked.ended.set()
    return asked.answer


async def _check(ctx: RungContext, rung: RungName, graph: CrateGraph) -> LibCheck | None:
    head = head_of(ctx)
    # Without a lock file, each side would resolve the registry on its own.
    if isinstance(head, str) or not (ctx.root / "Cargo.lock").is_file():
        return None
    crates = (await affected_of(ctx, graph)).crates
    if not crates:
        return None
    argv = argv_of(crates)
    heads: list[tuple[BaseResult, bool] | str] = []

    async def on_heads() -> None:
        early = _EARLY.get((ctx.ladder_id, str(ctx.root)))
        if early is not None and early.argv == argv:
            await early.done.wait()
            if early.answer is not None:
                heads.append(early.answer)
                return
        heads.append(await _on_head(ctx, rung, head, argv))

    async with anyio.create_task_group() as beside:
        beside.start_soon(on_heads)
        told = await _told_by_tests(ctx, graph, crates)
        if told is not None:
            errors, how = told.errors, _TOLD.format(argv=shlex.join(argv))
        else:
            env = {"CARGO_TARGET_DIR": str(lib_target_dir(ctx))}
            await seed_target(ctx, graph, lib_target_dir(ctx))
            outcome = await ctx.run(
                rung, argv, suffix=".lib.out", reap_leftovers=False, extra_env=env
            )
            errors = [d for d in compiler_messages(outcome.text, ctx.root, tool=TOOL) if _error(d)]
            if outcome.exit_code != 101 or outcome.timed_out:
                errors = []
            how = f"`{shlex.join(argv)}` on the tree and on HEAD"
        added: list[Diagnostic] = []
        if not errors:
            # The crates' own code compiles: nothing to decide, and HEAD's check is not waited
            # for (it held HEAD's target folder, which the rung's own command on HEAD then
            # waits for). The warm-up makes it for a one-crate project (warm.py).
            beside.cancel_scope.cancel()
        else:
            added = await anyio.to_thread.run_sync(_beyond_head, ctx, head, errors)
            if added:
                beside.cancel_scope.cancel()  # HEAD's answer could not change these
    if added:
        said = (
            "the tests' build's errors in the crates' own code"
            if told
            else f"`{shlex.join(argv)}` on the tree"
        )
        return LibCheck(
            argv=argv,
            diagnostics=added,
            baseline=f"HEAD {head.head[:12]}: not needed, the new errors are on lines the "
            "change added",
            how=f"{said}, on lines the change added whose text HEAD's files lack (no finding "
            "of HEAD's could match them)",
            unsettled=len(errors) - len(added),
        )
    if not errors or not heads or isinstance(heads[0], str):
        return None
    base, cached = heads[0]
    marked = await anyio.to_thread.run_sync(mark_against_head, ctx, head, errors, base.findings)
    if not any(not d.preexisting for d in marked):
        return None
    label = f"HEAD {head.head[:12]}" + (" (cached)" if cached else "")
    return LibCheck(argv=argv, diagnostics=marked, baseline=label, how=how)


def _beyond_head(ctx: RungContext, head: HeadTree, errors: list[Diagnostic]) -> list[Diagnostic]:
    # Blocking (reads the files and HEAD's blobs): the errors no finding of HEAD's check could
    # match under the baseline's passes (baseline.new_whatever_head_has), so new whatever it
    # says: an error in code the change added to a file it touched is the change's, and
    # HEAD's check from nothing (about 1 s of a first compile error at a HEAD) is not waited
    # for. Never one in a file outside the change (a dependency's source, generated code).
    if not errors:
        return []
    now = functools.cache(functools.partial(lines_now, ctx))
    return new_whatever_head_has(errors, now, head.lines, set(ctx.touched))


def argv_of(crates: Sequence[str]) -> list[str]:
    """The check of `crates`' own code (the same on both sides)."""
    return [*_ARGV, *packages(crates), *_UNITS]


async def _on_head(
    ctx: RungContext, rung: RungName, head: HeadTree, argv: list[str]
) -> tuple[BaseResult, bool] | str:
    try:
        return await on_head(
            ctx, rung, head, argv, tool=TOOL, keep=_error, env={}, suffix=".lib.base.out"
        )
    except OSError as exc:  # git could not give HEAD's files, or cargo did not start
        return str(exc)


@dataclass
class _Early:
    argv: list[str]
    done: anyio.Event = field(default_factory=anyio.Event)
    answer: tuple[BaseResult, bool] | str | None = None
    """None: stopped before it had one."""


_EARLY: dict[tuple[str, str], _Early] = {}
"""(ladder id, root) → HEAD's check started with the climb's tests' build (`head_early`)."""


async def head_early(
    ctx: RungContext, rung: RungName, graph: CrateGraph, spool: Path, ended: anyio.Event
) -> None:
    """HEAD's check of the climb's crates' own code, started with the tests' build writing
    to `spool` (`ended` set once that run ended) when no answer of it is cached at this
    HEAD (the first climb there: the warm-up, which makes it, waits on the trust that first
    verify gives). A compile error then waits for what is left of it, not for all of it
    after the build's first error (scopeguard's first verify: the build failed 0.4 s in,
    HEAD's check took 0.6 s more). It stops as soon as the tree's build has built every
    library and binary of those crates as built for use (their code compiles: the check
    has nothing to judge), so a build that compiles costs it at most that long; and it
    stops with the rung that started it (the climb's other asker, clippy's rung, then runs
    its own, as it would have)."""
    head = head_of(ctx)
    if isinstance(head, str) or not (ctx.root / "Cargo.lock").is_file():
        return
    crates = (await affected_of(ctx, graph)).crates
    if not crates:
        return
    argv = argv_of(crates)
    if await anyio.to_thread.run_sync(head_cached, ctx, head, argv, {}):
        return
    key = (ctx.ladder_id, str(ctx.root))
    early = _EARLY[key] = _Early(argv)
    while len(_EARLY) > 16:
        del _EARLY[next(iter(_EARLY))]
    try:
        async with anyio.create_task_group() as beside:

            async def watch() -> None:
                if await said_line(spool, PlainBuilds(graph, crates).line, ended):
                    beside.cancel_scope.cancel()  # the crates' own code compiles

            beside.start_soon(watch)
            early.answer = await _on_head(ctx, rung, head, argv)
            beside.cancel_scope.cancel()
    finally:
        early.done.set()


async def head_check(ctx: RungContext, rung: RungName, crates: Sequence[str]) -> str | None:
    """HEAD's check of `crates`' own code as a climb whose change reaches just them asks it,
    made ahead (the warm-up's: a first compile error at that HEAD then waits for no check
    there): what it found, or why it could not run; None when no climb would ask it (no
    HEAD, no lock file)."""
    head = head_of(ctx)
    if isinstance(head, str) or not (ctx.root / "Cargo.lock").is_file():
        return None
    answer = await _on_head(ctx, rung, head, argv_of(crates))
    if isinstance(answer, str):
        return answer
    return f"HEAD's {TOOL} --lib --bins ({len(answer[0].findings)} errors)"


_TOLD = (
    "the tests' build's errors in the crates' own code (their libraries and binaries as "
    "built for use, told apart from their test harnesses by cargo) against `{argv}` on HEAD"
)


async def _told_by_tests(
    ctx: RungContext, graph: CrateGraph, crates: list[str]
) -> PlainErrors | None:
    """The crates' own code's errors as this climb's tests' build told them, once it ended
    (build_evidence.py), when that is all of them; None when no such build runs or it did
    not tell them all."""
    build = _BUILDS.get((ctx.ladder_id, str(ctx.root)))
    if build is None:
        return None
    await said(build.spool, BUILD_FINISHED, build.ended)  # or the run ended: read it whole
    try:
        text = await anyio.to_thread.run_sync(build.spool.read_text, "utf-8", "replace")
    except OSError:
        return None
    told = await anyio.to_thread.run_sync(plain_errors, text, graph, crates)
    return told if told is not None and told.complete else None


@dataclass
class _Build:
    spool: Path
    ended: anyio.Event = field(default_factory=anyio.Event)


_BUILDS: dict[tuple[str, str], _Build] = {}
"""(ladder id, root) → the climb's tests' build under way (`tests_build`)."""


@contextlib.contextmanager
def tests_build(ctx: RungContext, spool: Path) -> Iterator[anyio.Event]:
    """For as long as the block runs, the check may take the crates' own code's errors
    from the tests' build writing to `spool` (a `cargo test --message-format=json` of this
    climb) once it ended, instead of checking that code on the tree itself. The block sets
    the event it gets once that run ended (its build did, whatever it said)."""
    key = (ctx.ladder_id, str(ctx.root))
    build = _BUILDS[key] = _Build(spool)
    while len(_BUILDS) > 16:
        del _BUILDS[next(iter(_BUILDS))]
    try:
        yield build.ended
    finally:
        build.ended.set()
        if _BUILDS.get(key) is build:
            del _BUILDS[key]


def _judged(d: Diagnostic) -> bool:
    """An error this check may decide: any but a lint only clippy has."""
    return d.severity == "error" and not (d.code or "").startswith("clippy::")


async def run_judged(
    ctx: RungContext,
    rung: RungName,
    graph: CrateGraph,
    argv: list[str],
    *,
    tool: str,
    extra_env: Mapping[str, str],
) -> tuple[Outcome | None, LibCheck | None]:
    """`argv` (a compiler run of the tree), and from its first compile error on, when HEAD's
    run of `argv` is not cached yet, the crates' own check (`new_lib_errors`) beside it: a new
    error there ends the run, else it runs to its end: (the run's outcome, the
    check's answer for its errors or None). Decided before the run ended, its outcome is
    None."""
    head = head_of(ctx)
    if isinstance(head, str) or not await anyio.to_thread.run_sync(
        _worth_judging, ctx, head, argv, head_side(extra_env)
    ):
        return await ctx.run(rung, argv, reap_leftovers=False, extra_env=extra_env), None
    decided: list[LibCheck] = []
    outcome: Outcome | None = None
    ended = anyio.Event()
    async with anyio.create_task_group() as beside:

        async def judge() -> None:
            if await said_line(ctx.spool(rung, ".out"), compile_error, ended):
                answer = await new_lib_errors(ctx, rung, graph)
                if answer is not None:
                    decided.append(answer)
                    ending_red()  # the rung is red: the climb ends, the run is reaped after
                    beside.cancel_scope.cancel()  # the run's other units decide nothing now

        beside.start_soon(judge)
        try:
            outcome = await ctx.run(rung, argv, reap_leftovers=False, extra_env=extra_env)
        finally:
            ended.set()
        if not any(_judged(d) for d in compiler_messages(outcome.text, ctx.root, tool=tool)):
            beside.cancel_scope.cancel()
    if decided:
        return outcome, decided[0]
    assert outcome is not None
    if any(_judged(d) for d in compiler_messages(outcome.text, ctx.root, tool=tool)):
        return outcome, await new_lib_errors(ctx, rung, graph)
    return outcome, None


def _worth_judging(
    ctx: RungContext, head: HeadTree, argv: list[str], env: Mapping[str, str]
) -> bool:
    # Blocking: a lock file is there (HEAD's check reads the same one) and HEAD's run of
    # `argv` is not cached.
    return (ctx.root / "Cargo.lock").is_file() and not head_cached(ctx, head, argv, env)


def decided_by(result: RungResult, check: LibCheck, what: str) -> RungResult:
    """`result` (the rung's run, `what` it found) made red by `check`'s new errors: its
    findings are the check's, and a note says what the rung's own ones were."""
    new, old = summarize(check.diagnostics)
    first = next(d for d in check.diagnostics if d.severity == "error" and not d.preexisting)
    also = f" (+{old} pre-existing)" if old else ""
    untold = (
        [
            f"{check.unsettled} more compile error(s) of the tree not compared with HEAD and "
            "not listed: the verdict is red for the ones listed"
        ]
        if check.unsettled
        else []
    )
    red = result.model_copy(
        update={
            "state": "red",
            "diagnostics": check.diagnostics,
            "baseline": check.baseline,
            "new_findings": new,
            "preexisting_findings": old,
            "reason": f"{new} new compile error(s){also}, first "
            f"{first.file}:{first.line} {first.code or ''}".rstrip(),
            "notes": [
                *result.notes,
                f"judged by {check.how}: a compile error (or a failed build script) in the "
                f"crates' own code that HEAD's does not have; {what} not compared with HEAD "
                "one by one",
                *untold,
            ],
        }
    )
    return build_verdict(red)
