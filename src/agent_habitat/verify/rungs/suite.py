"""`test.scoped` (the tests the change affects, or an explicit filter) and `test.full`
(the whole suite; the project's CI command under `ci_parity`), run by pytest in the
project's environment. A red run's failed tests are asked of HEAD (pytest_head.py): one that
failed there too is listed as already failing at HEAD, not red (head_tests.py)."""

from __future__ import annotations

import threading

import anyio

from ..command import Outcome
from ..environments import ProjectEnv
from ..head import HeadTree
from ..models import Diagnostic, RungName, RungResult, RungState
from ..parsers import JunitCounts, junit_counts, parse_junit, parse_pytest_summary
from ..select.testdeps import Recording, RunScope
from ..tracebacks import conftest_error, start_failure, unimportable
from . import warm_pytest
from .context import RungContext, from_outcome, skipped
from .head_early import FAILED_ENV, EarlyHead
from .head_tests import HeadRun, settle_tests
from .preamble import Configured, python_rung
from .pytest_head import cache_key, test_key, tests_on_head

__all__ = ["full_suite", "no_measuring", "pytest_args", "scoped_suite"]

# pytest's documented exit codes.
_TESTS_FAILED, _INTERRUPTED, _USAGE_ERROR, _NO_TESTS = 1, 2, 4, 5


def pytest_args(tests: list[str]) -> list[str]:
    """Filter items as pytest arguments: `-k EXPR` / `-m EXPR` split, the rest passed as is."""
    out: list[str] = []
    for item in tests:
        flag, _, rest = item.partition(" ")
        if flag in ("-k", "-m") and rest.strip():
            out += [flag, rest.strip()]
        else:
            out.append(item)
    return out


def no_measuring(ctx: RungContext) -> list[str]:
    """What keeps a ladder run from measuring coverage: pytest-cov, when the project's
    pytest loads it, is told `--no-cov`. Its data file and reports (`.coverage`,
    `coverage.xml`, `htmlcov/`) would land in the project and be a change of the tree the run
    verified, and its `--cov-fail-under` would turn a run of the affected tests red for what
    the change did not do. The tests run the same code either way, without the tracer."""
    assert ctx.env is not None
    if not ctx.env.has("pytest_cov") or ctx.process_env().get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return []
    return ["--no-cov"]


def _verdict(
    outcome: Outcome, found: bool, counts: JunitCounts | None
) -> tuple[RungState | None, str | None]:
    """pytest's exit code read as a rung's state (None: green or red by the code), and why."""
    code = outcome.exit_code
    if code == 0 and counts is not None and counts.skipped and not counts.passed + counts.failed:
        # Green means something was checked: a run whose every test was skipped was not.
        why = f"every test it ran was skipped ({counts.skipped} skipped, none passed)"
        return "skipped", why + ": nothing was checked"
    if code == _NO_TESTS:
        return "error", "pytest collected no tests (exit 5); check the filter or selection"
    if code in (_INTERRUPTED, _USAGE_ERROR) and found:
        # Collection errors (exit 4 when the tests were named by node id, or a conftest):
        # a test module or what it imports is broken, which is the code's doing.
        return "red", None
    if code not in (0, _TESTS_FAILED) and code is not None and code > 0:
        return "error", f"pytest failed to run (exit {code}): {outcome.tail.strip()[-300:]}"
    return None, None


def _no_session(
    outcome: Outcome, ctx: RungContext
) -> tuple[RungState | None, str | None, list[Diagnostic]]:
    """Exit 1 with no report and no failed test named: pytest stopped before its session
    when the output ends in a Python traceback. Its deepest frame in the project makes it
    the change's (red there); with none, pytest or what it imports is broken, which is the
    environment's failing (`error`), never a test the change failed."""
    failure = start_failure(outcome.text, ctx.root)
    if failure is None:
        return None, None, []
    found = failure.diagnostic()
    if found is not None:
        return None, None, [found]
    why = f"pytest could not start (exit 1, no test ran): {failure.error}"
    return "error", why + "; the environment's failing, not the change's", []


def _not_importable(
    ctx: RungContext, diagnostics: list[Diagnostic]
) -> tuple[list[Diagnostic], str | None]:
    """The collection errors that only say the project's own package cannot be imported by
    the interpreter the ladder uses (not installed, no `pythonpath`): dropped, with why and
    the fix. Such a run checked nothing of the change and fails the same at HEAD, so it is
    never red for the change; the other diagnostics stay as they were."""
    assert ctx.env is not None
    modules = sorted({m for d in diagnostics if (m := unimportable(d, ctx.root)) is not None})
    if not modules:
        return diagnostics, None
    left = [d for d in diagnostics if unimportable(d, ctx.root) is None]
    names = ", ".join(f"'{m}'" for m in modules)
    why = (
        f"the project is not importable: pytest could not import its own {names} "
        f"(No module named {names}) with {ctx.env.label}; install it "
        f"(`{ctx.env.python} -m pip install -e .`) or set pythonpath "
        '([tool.pytest.ini_options] pythonpath = ["src"] for a src/ layout); '
        "the environment's failing, not the change's"
    )
    return left, why


_NOTHING_IN_THE_SUITE = (
    "pytest collected no tests (exit 5) from the whole suite: no file matches its python_files "
    "(test_*.py and *_test.py unless configured) under its testpaths, or its options deselect "
    "every test; if the project's tests are named otherwise (tests.py), name them in "
    "[tool.pytest.ini_options] python_files"
)
"""Why a run of the whole suite, no filter given, found nothing: no selection or filter to
check (jsonpointer 3.0.0 keeps its tests in `tests.py`)."""


def _judge(
    ctx: RungContext,
    outcome: Outcome,
    diagnostics: list[Diagnostic],
    counts: JunitCounts | None,
    notes: list[str],
    whole: bool,
) -> tuple[RungState | None, str | None, list[Diagnostic]]:
    """The run's state, why, and the diagnostics that are the code's (None: by exit code);
    `whole`: the run was of the whole suite, with no filter."""
    if outcome.exit_code == _USAGE_ERROR and not diagnostics:
        # A conftest that fails to import writes no report: its traceback is in the output.
        found = conftest_error(outcome.text, ctx.root)
        diagnostics = [found] if found is not None else []
    diagnostics, not_importable = _not_importable(ctx, diagnostics)
    state, reason = _verdict(outcome, bool(diagnostics), counts)
    if outcome.exit_code == _NO_TESTS and whole:
        reason = _NOTHING_IN_THE_SUITE
    if not_importable is not None and not diagnostics:
        return "error", not_importable, []
    if not_importable is not None:
        notes.append(not_importable)
    if outcome.exit_code == _TESTS_FAILED and counts is None and not diagnostics:
        return _no_session(outcome, ctx)
    return state, reason, diagnostics


async def _pytest(
    ctx: RungContext, rung: RungName, tests: list[str], why: str, rec: Recording | None = None
) -> RungResult:
    assert ctx.env is not None
    if not ctx.env.has("pytest"):
        return skipped(
            ctx,
            rung,
            f"pytest not installed in {ctx.env.label}; install with "
            f"{ctx.env.install_hint('pytest')}",
            missing="pytest",
        )
    junit = ctx.spool(rung, ".xml")
    base = [str(ctx.env.python), "-m", "pytest", "-q", "-rfE", "--color=no"]
    # A test module that fails to import is a failure of its own (red, or listed when it
    # failed so at HEAD), not the end of the run: the other tests still check the change.
    base += ["-o", "junit_family=xunit1", "--continue-on-collection-errors", *no_measuring(ctx)]
    argv = [*base, f"--junitxml={junit}", *(rec.args if rec else []), *pytest_args(tests)]
    warm, why_not = await warm_pytest.for_rung(ctx)
    report = ctx.spool(rung, ".warm") if warm is not None else None
    run_argv = warm.wrap(argv, report) if warm is not None and report is not None else argv

    async def on_head(
        head: HeadTree, keys: list[str], tag: str = "", nodeids: dict[str, str] | None = None
    ) -> HeadRun | str:
        # `tag`: a run on HEAD begun while the tree's goes on (head_early.py) beside another.
        # Through the warm pytest too when there is one: the failed tests' run on HEAD is
        # on the verdict's path (the first verify of humanize 4.9.0, 10 failures: ~2 s of
        # a fresh interpreter at load 15).
        told = ctx.spool(rung, f".head{tag}.warm")
        via = (lambda run: warm.wrap(run, told)) if warm is not None else None
        try:
            argv = [*base, "-p", "no:cacheprovider"]
            return await tests_on_head(ctx, rung, head, keys, argv, via, tag, nodeids)
        finally:
            await anyio.Path(told).unlink(missing_ok=True)

    key = cache_key(ctx, ctx.snapshot.head or "")
    early = EarlyHead(ctx, ctx.spool(rung, ".failed"), key, on_head) if rec else None
    try:
        outcome = await _run_tree(ctx, rung, run_argv, rec, early)
    except BaseException:
        if rec is not None:
            rec.discard()  # cancelled: what it wrote so far is not a run's record
        raise
    if report is not None:
        why += "; " + await anyio.to_thread.run_sync(warm_pytest.run_note, report)
    elif why_not is not None:
        why += f"; pytest ran fresh: {why_not}"
    notes = [why]
    recording = None
    if rec is not None:  # per-test dependency data for test.scoped's selection
        done = outcome.signal is None and not outcome.timed_out and outcome.exit_code in (0, 1)
        # Folded into the store beside the rest (a red run's failed tests asked of HEAD):
        # what HEAD's answer reads of the store is never this run's (a run of the changed
        # tree vouches for no failed test at HEAD), and the store is replaced whole.
        recording = _Folding(rec, done)
    diagnostics = parse_junit(junit, ctx.root)
    if diagnostics is None:
        diagnostics = parse_pytest_summary(outcome.text)
    counts = junit_counts(junit)
    await anyio.Path(junit).unlink(missing_ok=True)
    if counts is not None:
        notes.insert(1, counts.note)  # how many ran, which a filter or a path does not say
    recorded_at = len(notes)
    state, reason, diagnostics = _judge(ctx, outcome, diagnostics, counts, notes, not tests)
    result = from_outcome(
        ctx,
        rung,
        outcome,
        tool="pytest",
        state=state,
        reason=reason,
        diagnostics=diagnostics,
        notes=notes,
    )
    if result.state == "red" and diagnostics:
        first = diagnostics[0].message.splitlines()[0][:200]
        collection = sum("collection error" in d.message for d in diagnostics)
        what = (
            f"{collection} collection error(s)"
            if collection == len(diagnostics)
            else f"{len(diagnostics)} test failure(s)"
        )
        started = not first.startswith("pytest could not start")
        result.reason = f"{what}, first {first}" if started else first

    settled = await settle_tests(
        ctx,
        result,
        cache_key=key,
        key_of=test_key,
        run_on_head=on_head,
        asked_early=early.asked if early is not None else (),
    )
    _nothing_ran(settled, counts)
    if recording is not None:
        settled.notes.insert(recorded_at, await recording.note())
    return settled


def _nothing_ran(result: RungResult, counts: JunitCounts | None) -> None:
    """A run whose failures were all HEAD's too but in which no test ran, only test modules
    failing to import as at HEAD, checked nothing: `error`, never green (nor the change's
    red), as a Go or Rust test build failing at HEAD too."""
    collection = [d for d in result.diagnostics if "collection error" in d.message]
    if result.state != "green" or counts is None or not collection:
        return
    if counts.passed + counts.failed > len(collection):
        return
    first = collection[0].message.splitlines()[0][:200]
    result.state = "error"
    result.reason = (
        f"no test ran: {len(collection)} test module(s) already fail to import at HEAD "
        f"(not the change's), first {first}"
    )


async def _run_tree(
    ctx: RungContext,
    rung: RungName,
    argv: list[str],
    rec: Recording | None,
    early: EarlyHead | None,
) -> Outcome:
    """The tree's run; with `early`, HEAD is asked about its failures as they come (the
    recording plugin names them), and what is left of that when the run ends is done by
    the time this returns."""
    if rec is None or early is None:
        return await ctx.run(rung, argv, extra_env=rec.env() if rec else None)
    env = {**rec.env(), FAILED_ENV: str(early.failed)}
    await anyio.Path(early.failed).unlink(missing_ok=True)  # a killed run's, left behind
    failed: Exception | None = None
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(early.follow)
            try:
                outcome = await ctx.run(rung, argv, extra_env=env)
            except Exception as exc:  # raised as it is, not in the task group's ExceptionGroup
                failed = exc
            finally:
                early.ended()
    finally:
        await anyio.Path(early.failed).unlink(missing_ok=True)
    if failed is not None:
        raise failed
    return outcome


class _Folding:
    """A run's dependency data folded into the store in a thread of its own (blocking work,
    0.85 s for rfc3986's 2,836 tests at load 8), while the rung goes on."""

    def __init__(self, rec: Recording, done: bool) -> None:
        self._said: str | None = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._fold, args=(rec, done), daemon=True)
        self._thread.start()

    def _fold(self, rec: Recording, done: bool) -> None:
        try:
            self._said = rec.finish(done)
        except BaseException as exc:  # raised where the rung waits for it
            self._failed = exc

    async def note(self) -> str:
        await anyio.to_thread.run_sync(self._thread.join)
        if self._failed is not None:
            raise self._failed
        assert self._said is not None
        return self._said


def _nothing_selected(ctx: RungContext) -> str | None:
    selection = ctx.selection
    return (
        "no test is affected by the change" if not selection.full and not selection.tests else None
    )


def _recording(ctx: RungContext, scope: RunScope) -> Recording | None:
    """Every pytest run of the ladder records per-test dependency data for selection: of
    the packages, or of the single-file modules of a project that has no package (parse's
    `parse.py`), which before were recorded only by the background recording."""
    if not ctx.layout.packages and not ctx.layout.modules:
        return None
    return Recording(ctx.root, ctx.layout, ctx.workspace.state_dir, ctx.snapshot, scope)


def _scope(tests: list[str]) -> RunScope:
    """What a run of `tests` (pytest args) covers whole: the files and folders given, none
    when a `-k` / `-m` filter narrows them."""
    if any(item.partition(" ")[0] in ("-k", "-m") for item in tests):
        return RunScope(whole_suite=False)
    return RunScope(whole_suite=False, paths=[t for t in tests if "::" not in t])


@python_rung("test.scoped", no_work=_nothing_selected)
async def scoped_suite(ctx: RungContext, env: ProjectEnv) -> RungResult:
    selection = ctx.selection
    if selection.full:
        why = "whole suite: " + "; ".join(selection.reasons)
    else:
        why = f"{len(selection.tests)} test path(s) selected: " + selection.listed(5)
    if ctx.impact.provenance and not selection.filtered:
        why += f" ({ctx.impact.provenance})"
    tests = [] if selection.full else selection.tests
    scope = RunScope() if selection.full else _scope(tests)
    return await _pytest(ctx, "test.scoped", tests, why, _recording(ctx, scope))


def _full_command(ctx: RungContext) -> Configured | None:
    if ctx.policy == "ci_parity" and ctx.config.ci_test is not None:
        return Configured(ctx.config.ci_test, tool="ci_test", notes=("the project's CI command",))
    command = ctx.config.command_for("test.full")
    return Configured(command) if command is not None else None


@python_rung("test.full", configured=_full_command)
async def full_suite(ctx: RungContext, env: ProjectEnv) -> RungResult:
    return await _pytest(ctx, "test.full", [], "whole suite", _recording(ctx, RunScope()))
