"""The warm-up's step for a Go project (verify/runner/warmup.py): `go vet -json ./...` once, at
background priority, when a host opens a trusted Go project and no verify runs.

One `go vet` of one package vets the package and every standard-library package it
imports, for the facts its analyzers share (go-version v1.7.0: 81 vet actions); go's build
cache keeps them, but a cache only `go test` warmed does not hold them (its vet step runs
other analyzers). Cold, that is 8-11 s of a first verify at load 21-25. And a climb whose
tests are red first stops `diagnose.files` (verify/ahead.py), killing go vet before the
largest of those actions end: they never reached the cache, and every climb of go-version
did them again, 0.5-1.2 s slower than main's climbs that let one vet finish (issue 27).
Here they are done once, beside the climbs, with go's cache shared by both."""

from __future__ import annotations

import shutil

from ...rungs.context import RungContext

__all__ = ["warm_vet"]


async def warm_vet(ctx: RungContext) -> tuple[str, str]:
    """(state, detail) for warm.json's `lint_baseline` step."""
    go = shutil.which("go", path=ctx.process_env().get("PATH"))
    if go is None:
        return "skipped", "go is not on PATH"
    nice = shutil.which("nice", path=ctx.process_env().get("PATH"))
    # -json as diagnose.files runs it: go keys vet's results by its flags, and a plain go vet
    # left the climb's `go vet -json` as cold as before (uuid v1.6.0: 28 s after it).
    argv = [*([nice, "-n", "10"] if nice else []), go, "vet", "-json", "./..."]
    outcome = await ctx.run("diagnose.files", argv, suffix=".warm-vet.out", substrate=False)
    if outcome.timed_out:
        return "failed", f"go vet -json ./... timed out after {ctx.config.timeout_s:g} s"
    if outcome.signal is not None:
        return "failed", f"go vet -json ./... killed by {outcome.signal}"
    priority = " at background priority (nice 10)" if nice else ""
    return "warm", (
        f"go vet -json ./...{priority}: its analysis of the packages and the standard library "
        f"they import is in go's build cache (exit {outcome.exit_code}; findings are "
        "diagnose.files' to judge)"
    )
