"""The failed tests of a red pytest run, asked of HEAD's content (head_tests.py decides which
failures are pre-existing).

A failure's key is its pytest node id (`tests/test_x.py::TestA::test_b[1]`). A test
module's collection error is keyed by the module and what it raised (paths relative to the
root, not where it was raised: the line may have moved); HEAD's run of that module says
whether it failed to import there the same way, so a module HEAD could not import either is
not the change's, while another error in it, or in a module HEAD imported, is. A conftest
that did not import, or a run that died, is no one test: it stays the change's.

The recorded data answers first: a test that passed in a run of HEAD's content (the
background recording of HEAD's export, or a verify of a clean tree), or in a run of an
earlier edit whose record of it holds on HEAD's content (selection's reasoning, applied to
HEAD's export), did not fail at HEAD, so its failure now is the change's without running
anything. The rest run by node id (a module by its path) in HEAD's export
(`HeadTree.export`), its packages imported from there (`PYTHONPATH`, checked first, as the
recording of HEAD checks it: an environment that imports them from elsewhere would run the
working tree's code and call it HEAD's). A node id HEAD does not have is a new test
(pytest's `not found`: dropped and the rest run again, once).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

import anyio
import anyio.to_thread

from ..baseline import fingerprint
from ..deps_store import is_clean_at, load_testdeps
from ..head import HeadTree
from ..layout import Layout, discover_layout
from ..models import Diagnostic, RungName
from ..parsers import junit_key, parse_junit
from ..select.deps import plain_node_id
from ..select.selection import unrecorded
from ..select.testdeps import deps_store_dir
from .context import RungContext
from .head_tests import HeadRun

__all__ = [
    "cache_key",
    "collected",
    "failure_key",
    "imported_elsewhere",
    "test_key",
    "tests_on_head",
]

_PROBE = """
import importlib.util, os, sys
here = os.path.realpath(os.getcwd()) + os.sep
for name in sys.argv[1:]:
    origin = os.path.realpath(importlib.util.find_spec(name).origin)
    if not origin.startswith(here):
        print(origin)
"""
"""Prints where each named package imports from, when that is not the current folder."""
_NOT_FOUND = re.compile(r"^ERROR: not found: (?P<node>\S+)", re.MULTILINE)


_NODE = re.compile(r"^(?P<node>[^\s\[]+::[^\s\[]+(?:\[.*?\])?)(?: \([^()\s]+:\d+\))?: ")
"""`node: message`, or `node (test_file:line): message` when raised in a helper (parsers.py);
a parameter may hold `: `."""


_COLLECTED = re.compile(r"^(?P<module>[^\s:]+\.py): collection error: ")
"""A test module's collection error (parsers.py): `tests/t.py: collection error: ...`."""
_RAISED_AT = re.compile(r" \(raised at [^()\s]+:\d+\)$")


def collected(key: str) -> str | None:
    """The test module a collection error's key names (what runs it on HEAD); None for a
    node id."""
    m = _COLLECTED.match(key)
    return m["module"] if m is not None else None


def test_key(diag: Diagnostic) -> str | None:
    """The node id a pytest failure is; for a test module's collection error, the module and
    what it raised; None for a conftest's, or what names no test."""
    if diag.source != "pytest":
        return None
    first = diag.message.splitlines()[0] if diag.message else ""
    module = collected(first)
    if module is not None:
        return None if PurePosixPath(module).name == "conftest.py" else _RAISED_AT.sub("", first)
    if "collection error" in first:
        return None
    m = _NODE.match(diag.message)
    return m["node"] if m is not None else None


def failure_key(nodeid: str, file: str) -> str | None:
    """The key `test_key` gives the failure of pytest's `nodeid` (its function in `file`)
    once the junit report names it; None when it gives none."""
    m = _NODE.match(junit_key(nodeid, file) + ": ")
    return m["node"] if m is not None else None


def cache_key(ctx: RungContext, head: str) -> str:
    assert ctx.env is not None
    return fingerprint("pytest on HEAD", head, str(ctx.env.python))


async def imported_elsewhere(ctx: RungContext, layout: Layout, env: dict[str, str]) -> str | None:
    """Why the project's environment would not import `layout`'s packages from its root
    with `env` (the modules it finds elsewhere); None when it does."""
    assert ctx.env is not None
    done = await anyio.run_process(
        [str(ctx.env.python), "-c", _PROBE, *sorted(layout.packages)],
        cwd=layout.root,
        env=env,
        check=False,
    )
    elsewhere = done.stdout.decode("utf-8", "replace").split()
    if done.returncode != 0 or elsewhere:
        return (
            "the project's environment imports its packages from elsewhere than an export "
            f"of HEAD ({', '.join(elsewhere) or 'not found'})"
        )
    return None


def _on_record(ctx: RungContext, head: str, keys: Sequence[str]) -> tuple[set[str], set[str]]:
    """Blocking: the tests of `keys` a run of HEAD's content recorded as passed, and those a
    record could vouch for at all (one that did not end early, or only skipped): for the
    rest, `_vouched_at_head` would build HEAD's import graph to doubt them all (the first
    verify's failures, on record only as this run's)."""
    deps = load_testdeps(deps_store_dir(ctx.workspace.state_dir))
    if deps is None:
        return set(), set()
    passed: set[str] = set()
    may: set[str] = set()
    for key in keys:
        for rid in deps.records.get(key, []):
            run = deps.runs.get(rid)
            if run is None or key not in run.tests:
                continue
            at = run.tests.index(key)
            if at not in run.ended_early or at in run.skipped:
                may.add(key)
            if at not in run.ended_early and is_clean_at(run, head):
                passed.add(key)
                break
    return passed, may


def _vouched_at_head(ctx: RungContext, layout: Layout, head: str, keys: Sequence[str]) -> set[str]:
    """Blocking: the tests of `keys` that a recorded run vouches for on HEAD's content
    (`layout`, its export), passed there: test selection's own reasoning, applied to HEAD
    instead of the working tree. A test whose record ran no block that differs at HEAD
    from what that run saw, and that passed in it, runs the same code at HEAD and passes;
    a record of a failed or skipped test never vouches (select/deps.py). A run of HEAD's
    whole content is no longer needed for a failure to count as the change's: runs of
    earlier edits elsewhere in the code answer too."""
    memo = ctx.hooks.memo if ctx.hooks is not None else None
    # Its own grimp and test-side caches (the export's files are other files than the
    # tree's, at other times); the store of recorded runs is the workspace's.
    doubted = unrecorded(
        layout,
        ctx.config,
        ctx.workspace.state_dir / "grimp-head",
        memo,
        head=head,
        hashes={},
        git_root=ctx.root,
    )
    if doubted is None:
        return set(keys)
    if doubted.full:
        return set()
    out: set[str] = set()
    for key in keys:
        rel = key.partition("::")[0]
        if not any(
            pick in (rel, key, plain_node_id(key)) or pick == "." or rel.startswith(pick + "/")
            for pick in doubted.tests
        ):
            out.add(key)
    return out


def _file(key: str) -> str:
    return collected(key) or key.split("::", 1)[0]


def _relative(node: str, prefixes: tuple[str, ...]) -> str:
    for prefix in prefixes:
        node = node.removeprefix(prefix)
    return node


def _export(ctx: RungContext, head: HeadTree) -> tuple[Path, Layout]:
    export = head.export()
    return export, discover_layout(export, ctx.config)


async def tests_on_head(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    keys: list[str],
    argv: list[str],
    via: Callable[[list[str]], list[str]] | None,
    tag: str,
    nodeids: dict[str, str] | None,
) -> HeadRun | str:
    """How many failures each key of `keys` (`test_key`'s) had on HEAD; `argv` is the pytest
    command without its junit report and tests, `via` what runs a whole command line (the
    warm pytest's client: a fork of the interpreter that has pytest imported, its path
    rebuilt for HEAD's export as a fresh one's would be). Or why HEAD could not answer.
    `tag` sets its spool files apart from those of another run on HEAD going on beside it.
    `nodeids`: a key's node id where the plugin named it (head_early.py), which pytest is
    given in its place: a test inherited from a base class in another file has a key named
    after that file, where pytest finds no such test."""
    key_of = {(nodeids or {}).get(k, k): k for k in keys}
    passed, may = await anyio.to_thread.run_sync(_on_record, ctx, head.head, list(key_of))
    ran = HeadRun(failed=Counter(dict.fromkeys((key_of[n] for n in passed), 0)))
    left = [n for n in key_of if n not in passed]
    if not left:
        return ran
    export, layout = await anyio.to_thread.run_sync(_export, ctx, head)
    if sorted(layout.packages) != sorted(ctx.layout.packages):
        return "HEAD's packages differ from the working tree's"
    if may & set(left):
        tests = [k for k in left if collected(k) is None]  # a record vouches for no import
        vouched = await anyio.to_thread.run_sync(_vouched_at_head, ctx, layout, head.head, tests)
        ran.failed.update(dict.fromkeys((key_of[n] for n in vouched), 0))
        left = [n for n in left if n not in vouched]
    if not left:
        return ran
    extra = {"PYTHONPATH": os.pathsep.join(str(p) for p in layout.source_roots)}
    if layout.packages and (why := await imported_elsewhere(ctx, layout, ctx.process_env(extra))):
        return why
    left = [k for k in left if (export / _file(k)).is_file()]  # others: new
    # A module that fails to import at HEAD is a failure there, not the end of the run.
    argv = [*argv, "--continue-on-collection-errors"]
    for _ in range(2):
        if not left:
            return ran
        junit = ctx.spool(rung, f".head{tag}.xml")
        run = [*argv, f"--junitxml={junit}", *dict.fromkeys(collected(k) or k for k in left)]
        run = via(run) if via is not None else run
        outcome = await ctx.run(
            rung, run, suffix=f".head-tests{tag}.out", cwd=export, extra_env=extra
        )
        found = parse_junit(junit, export)
        await anyio.Path(junit).unlink(missing_ok=True)
        # pytest 9 names them by absolute path, earlier ones as given.
        prefixes = (f"{export}{os.sep}", f"{export.resolve()}{os.sep}")
        missing = {_relative(n, prefixes) for n in _NOT_FOUND.findall(outcome.text)}
        if outcome.exit_code == 4 and missing:
            # A parameter id HEAD lacks is named without its brackets (pytest 9: "not
            # found: t.py::test_f"): its ids are new, the function's name is what was said.
            left = [k for k in left if k not in missing and k.split("[", 1)[0] not in missing]
            continue
        said = outcome.tail.strip()[-200:]
        if outcome.timed_out or outcome.exit_code not in (0, 1) or found is None:
            return f"pytest failed on HEAD (exit {outcome.exit_code}): {said}"
        keyed = [test_key(d) for d in found]
        if None in keyed or (outcome.exit_code == 1 and not found):
            return f"pytest could not run the failed tests on HEAD: {said}"
        ran.failed.update(k for k in keyed if k is not None)
        return ran
    return "pytest could not run the failed tests on HEAD: node ids not found twice"
