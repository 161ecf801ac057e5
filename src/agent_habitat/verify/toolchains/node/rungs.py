"""The Node toolchain's rung table (loaded by `LazyRunners` on the first climb)."""

from ...models import RungName
from ..base import Rung
from .compile import build_affected, compile_project
from .lint import diagnose_files
from .suite import full_suite, scoped_suite

__all__ = ["RUNNERS"]

RUNNERS: dict[RungName, Rung] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
