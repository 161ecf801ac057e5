"""The tests of a red `cargo test`, run on HEAD's content (rungs/head_tests.py decides
which failures are pre-existing).

A failure's key is its libtest name; a doc test's name carries its line (`src/lib.rs -
twice (line 4)`), which an edit above it moves, so its key leaves the line out. HEAD's run
runs in HEAD's export, built in the habitat's own HEAD target folder (as the compiler
rungs' HEAD checks are), as rustc builds them (never with clippy-driver: a project that
denies warnings under `cfg(test)`, as getopts does, would not build them).

It is narrowed (`narrowed`) to the targets cargo said failed (its `to rerun pass` arguments:
`--lib`, `--test api`, `-p strsim --doc`) and to the failed tests' names as libtest
filters: HEAD builds only those targets, and rustdoc compiles only the matching doc tests
(strsim's first red built all three targets and ran its 11 doc tests on HEAD, 16 s of a
33 s verdict). Each outcome is kept, so a later red at this HEAD asks again only about tests
it has no answer for, and then only their targets, which HEAD's target folder holds built.
When a failure's target is not known, HEAD runs the red command's whole test set once
(every outcome kept). Compile errors and binaries that died or exited without a report are
no one test: they stay the change's."""

from __future__ import annotations

import re
import shlex
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio.to_thread

from ...baseline import fingerprint
from ...head import HeadTree
from ...models import Diagnostic, RungName
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun
from .cargo import head_command, head_env
from .messages import compiler_messages

__all__ = [
    "cache_key",
    "failed_on_head",
    "head_argv",
    "name_key",
    "narrowed",
    "prebuild_on_head",
    "test_key",
]

_DOC_LINE = re.compile(r" \(line \d+\)$")
_OUTCOME = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<what>ok|FAILED|ignored)\b")


def name_key(name: str) -> str:
    """A libtest name as a key: a doc test's without its line."""
    return _DOC_LINE.sub("", name)


def test_key(diag: Diagnostic) -> str | None:
    """The test a failure of `libtest_report` is, doc tests without their line; None when it
    is not one test."""
    if diag.source != "cargo test" or diag.code != "test failed":
        return None
    name = diag.message.split(": ", 1)[0]
    if name == diag.message:
        name = name.removesuffix(" failed")
    if name.startswith("test binary of "):
        return None
    return name_key(name)


def head_argv(argv: list[str]) -> list[str]:
    """The run's cargo test without its libtest arguments (an explicit filter)."""
    return argv[: argv.index("--")] if "--" in argv else list(argv)


_TARGET_FLAGS = frozenset(
    {"--lib", "--bins", "--tests", "--examples", "--benches", "--doc", "--all-targets"}
)
_TARGET_NAMED = frozenset({"--bin", "--test", "--example", "--bench"})
_PACKAGE_NAMED = frozenset({"-p", "--package"})


def _without(argv: list[str], flags: frozenset[str], named: frozenset[str]) -> list[str]:
    """`argv` without `flags` and without each of `named` with the value after it."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in named:
            skip = True
        elif arg not in flags:
            out.append(arg)
    return out


def narrowed(
    runs: Sequence[list[str]], reruns: Sequence[Mapping[str, str]], keys: Sequence[str]
) -> list[list[str]] | None:
    """HEAD's runs for `keys`: per red run and target that failed (`reruns[i]`: a failed
    test's name → cargo's `to rerun pass` arguments, for run `i`), that run's cargo test of
    that target alone, with the keys of its failures as libtest filters. None when a key's
    target is not known (HEAD then runs the whole test set)."""
    grouped: dict[tuple[int, str], set[str]] = {}
    for i, said in enumerate(reruns):
        for name, args in said.items():
            key = _DOC_LINE.sub("", name)
            if key in keys:
                grouped.setdefault((i, args), set()).add(key)
    if not keys or {k for names in grouped.values() for k in names} != set(keys):
        return None
    out: list[list[str]] = []
    for (i, args), names in sorted(grouped.items()):
        selects = shlex.split(args)
        argv = _without(head_argv(runs[i]), _TARGET_FLAGS, _TARGET_NAMED)
        if any(a in _PACKAGE_NAMED for a in selects):
            argv = _without(argv, frozenset({"--workspace", "--all"}), _PACKAGE_NAMED)
        out.append([*argv, *selects, "--", *sorted({_filter(k) for k in names})])
    return out


def _filter(key: str) -> str:
    """A libtest filter that selects the test of `key`: rustdoc splits its test arguments
    at whitespace, so a doc test's key (`src/lib.rs - Version::parse`) gives its last word
    (a substring of its name, which may select a few more tests; the file when the item is
    the crate)."""
    words = [w for w in key.split() if w != "-"]
    return words[-1] if words else key


def cache_key(head: str, argv: list[str], root: Path) -> str:
    return fingerprint("cargo test on HEAD", head, *head_argv(argv), root / "Cargo.lock")


def _export(ctx: RungContext, head: HeadTree) -> Path:
    # Blocking: HEAD's export, with the working tree's lock file where HEAD has none (a
    # library that ignores it), so both runs build the same dependency versions.
    export = head.export()
    lock = ctx.root / "Cargo.lock"
    if lock.is_file() and not (export / "Cargo.lock").exists():
        shutil.copyfile(lock, export / "Cargo.lock")
    return export


def _outcomes(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for line in text.splitlines():
        m = _OUTCOME.match(line)
        if m is not None:
            out[_DOC_LINE.sub("", m["name"])] += m["what"] == "FAILED"
    return out


async def failed_on_head(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    argv: list[str],
    *,
    whole: bool = True,
    suffix: str = ".head-tests.out",
) -> HeadRun | str:
    """`argv` on HEAD: every test it runs (`whole`: its filter left out), else as given
    (`narrowed`'s); the failures by key and every test that passed at 0; or why it could
    not."""
    export = await anyio.to_thread.run_sync(_export, ctx, head)
    run = await head_command(ctx, rung, head_argv(argv) if whole else argv)
    outcome = await ctx.run(
        rung,
        run,
        suffix=suffix,
        cwd=export,
        extra_env=head_env(ctx),
        reap_leftovers=False,
    )
    said = outcome.tail.strip()[-200:]
    if outcome.timed_out or outcome.exit_code not in (0, 101):
        return f"cargo test failed on HEAD (exit {outcome.exit_code}): {said}"
    errors = [
        d for d in compiler_messages(outcome.text, export, tool="rustc") if d.severity == "error"
    ]
    if errors:
        first = errors[0]
        return f"HEAD's tests do not build ({first.file}:{first.line} {first.message[:120]})"
    outcomes = _outcomes(outcome.text)
    if outcome.exit_code == 101 and not any(outcomes.values()):
        return f"cargo test could not run these tests on HEAD: {said}"
    return HeadRun(failed=outcomes, whole=whole)


_PREBUILT: set[tuple[str, str, tuple[str, ...]]] = set()
"""(HEAD target folder, HEAD commit, argv) of the builds `prebuild_on_head` finished."""


async def prebuild_on_head(ctx: RungContext, rung: RungName, runs: Sequence[list[str]]) -> None:
    """HEAD's build of the test targets of `runs` (`cargo test --no-run`, as
    `failed_on_head` builds them: HEAD's export, HEAD's target folder and environment),
    started beside the working tree's tests: when they come out red, HEAD's outcome of the
    failed ones needs those binaries, and they are built (or under way) by then. A climb
    that does not need them cancels it (what it finished stays built); once it finished at
    a HEAD, it is not started again there. Nothing runs on HEAD but the compiler."""
    tree = head_of(ctx)
    if isinstance(tree, str):
        return  # no HEAD to compare with: no failure is pre-existing
    folder = str(head_env(ctx)["CARGO_TARGET_DIR"])
    todo = [
        argv
        for run in runs
        if (folder, tree.head, tuple(argv := [*head_argv(run), "--no-run"])) not in _PREBUILT
    ]
    if not todo:
        return
    export = await anyio.to_thread.run_sync(_export, ctx, tree)
    for n, argv in enumerate(todo):
        outcome = await ctx.run(
            rung,
            await head_command(ctx, rung, argv),
            suffix=f".head-build{n or ''}.out",
            cwd=export,
            extra_env=head_env(ctx),
            reap_leftovers=False,
            substrate=False,
        )
        if outcome.exit_code == 0 and not outcome.timed_out:
            while len(_PREBUILT) >= 64:
                _PREBUILT.pop()
            _PREBUILT.add((folder, tree.head, tuple(argv)))
