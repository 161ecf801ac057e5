"""The Rust toolchain's rung table (imported on first use, through `LazyRunners`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ...models import RungName, RungResult
from ...rungs.context import RungContext
from .rungs import build_affected, compile_project, diagnose_files
from .tests import full_suite, scoped_suite

__all__ = ["RUNNERS"]

RUNNERS: dict[RungName, Callable[[RungContext], Awaitable[RungResult]]] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
