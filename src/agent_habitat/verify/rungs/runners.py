"""The Python toolchain's rung table: each rung's name and the function that climbs it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..models import RungName, RungResult
from .build import build_affected
from .compile import compile_project
from .context import RungContext
from .diagnose import diagnose_files
from .suite import full_suite, scoped_suite

__all__ = ["RUNNERS"]

RUNNERS: dict[RungName, Callable[[RungContext], Awaitable[RungResult]]] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
