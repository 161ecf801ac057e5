# rungs/: one module per rung (suite.py holds both test rungs); context.py is what they share,
#   preamble.py the check every rung goes through (no work / configured / not Python);
#   compare.py + head_check.py + lint.py the comparison with HEAD; checkers.py which checker.
from collections.abc import Awaitable, Callable

from ..models import RungName, RungResult
from .build import build_affected
from .compile import compile_project, detect_type_checker
from .context import RungContext
from .diagnose import diagnose_files
from .dmypy import DmypyDaemon
from .suite import full_suite, scoped_suite

__all__ = ["RUNNERS", "DmypyDaemon", "RungContext", "detect_type_checker"]

RUNNERS: dict[RungName, Callable[[RungContext], Awaitable[RungResult]]] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
