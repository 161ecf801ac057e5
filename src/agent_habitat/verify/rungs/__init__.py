# rungs/: one module per rung (suite.py holds both test rungs); context.py is what they share,
#   preamble.py the check every rung goes through (no work / configured / not Python);
#   compare.py + head_check.py + lint.py the comparison with HEAD; head_tests.py the same for
#   tests (a test already failing at HEAD is not red), pytest_head.py its pytest side (failed
#   node ids run on HEAD's export); checkers.py which checker.
#   diagnose.py diagnose.files; lint_warm.py HEAD's lint baseline built ahead of time.
#   compile.py compile.project: mypy through dmypy.py (the warm daemon) and dmypy_client.py
#   (its recheck without a client process); typecheck.py the other checkers, pyright_tools.py
#   where the pyright family comes from, warm_checker.py + lsp.py one kept as a language server;
#   same_types.py whether a change is only comments a checker cannot tell from HEAD.
#   build.py build.affected, regenerate.py its first step (outdated generated sources).
#   warm_pytest.py the warm pytest of test.scoped and test.full.
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
