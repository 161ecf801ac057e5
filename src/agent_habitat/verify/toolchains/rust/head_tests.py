"""The tests of a red `cargo test`, run on HEAD's content (rungs/head_tests.py decides
which failures are pre-existing).

A failure's key is its libtest name; a doc test's name carries its line (`src/lib.rs -
twice (line 4)`), which an edit above it moves, so its key leaves the line out. HEAD's run
is the same cargo test (packages and targets) in HEAD's export, built in the habitat's own
HEAD target folder (as the compiler rungs' HEAD checks are), as rustc builds them (never
with clippy-driver: a project that denies warnings under `cfg(test)`, as getopts does,
would not build them), whole: every outcome it gives answers the later reds of the same
command at this HEAD without running anything (a run filtered to each red's failures paid
a cargo run on HEAD on every red). Compile errors and binaries that died or exited without
a report are no one test: they stay the change's."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import anyio.to_thread

from ...baseline import fingerprint
from ...head import HeadTree
from ...models import Diagnostic, RungName
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun
from .cargo import head_target_dir
from .messages import compiler_messages

__all__ = ["cache_key", "failed_on_head", "test_key"]

_DOC_LINE = re.compile(r" \(line \d+\)$")
_OUTCOME = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<what>ok|FAILED|ignored)\b")


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
    return _DOC_LINE.sub("", name)


def _head_argv(argv: list[str]) -> list[str]:
    """The run's cargo test without its libtest arguments (an explicit filter)."""
    return argv[: argv.index("--")] if "--" in argv else list(argv)


def cache_key(head: str, argv: list[str], root: Path) -> str:
    return fingerprint("cargo test on HEAD", head, *_head_argv(argv), root / "Cargo.lock")


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
) -> HeadRun | str:
    """Every test `argv` runs, run on HEAD (its filter left out): the failures by key and
    every test that passed at 0; or why it could not."""
    export = await anyio.to_thread.run_sync(_export, ctx, head)
    run = _head_argv(argv)
    target = {"CARGO_TARGET_DIR": str(head_target_dir(ctx))}
    outcome = await ctx.run(
        rung, run, suffix=".head-tests.out", cwd=export, extra_env=target, reap_leftovers=False
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
    return HeadRun(failed=outcomes, whole=True)
