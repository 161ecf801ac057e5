# rungs/: one module per rung (suite.py holds both test rungs); context.py is what they share,
#   preamble.py the check every rung goes through (no work / configured / not Python);
#   compare.py + head_check.py + lint.py the comparison with HEAD; head_tests.py the same for
#   tests (a test already failing at HEAD is not red), pytest_head.py its pytest side (failed
#   node ids run on HEAD's export), head_early.py HEAD asked about them while the run goes
#   on; checkers.py which checker.
#   diagnose.py diagnose.files; lint_warm.py HEAD's lint baseline built ahead of time.
#   compile.py compile.project: mypy through dmypy.py (the warm daemon) and dmypy_client.py
#   (its recheck without a client process), mypy_head_cache.py HEAD's mypy cache begun from
#   the tree's, mypy_stdlib.py the standard library's cache shared by a user's workspaces;
#   mypy_plain.py the plain mypy command (targets, flags, caches), mypy_early.py a one-shot
#   verify's plain mypy over the whole package begun as its process starts;
#   typecheck.py the other checkers, pyright_tools.py
#   where the pyright family comes from, warm_checker.py + lsp.py one kept as a language server
#   (warm_records.py its status files: which are live; long_waits.py which rungs wait on a
#   start now, read by the climb);
#   same_types.py whether a change is only comments a checker cannot tell from HEAD.
#   build.py build.affected, regenerate.py its first step (outdated generated sources).
#   warm_pytest.py the warm pytest of test.scoped and test.full.
#   checker_files.py the config files a checker reads. runners.py RUNNERS, the rung table.
#   The package's names load on first use (PEP 562): what
#   reads one rung module (`habitat status`'s warm lines: dmypy.py, warm_pytest.py) does not
#   import the ladder.
from ...lazy import lazy_attributes

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    from .compile import detect_type_checker
    from .context import RungContext
    from .dmypy import DmypyDaemon
    from .runners import RUNNERS

__getattr__ = lazy_attributes(
    __name__,
    {
        "RUNNERS": "runners",
        "DmypyDaemon": "dmypy",
        "RungContext": "context",
        "detect_type_checker": "compile",
    },
)

__all__ = ["RUNNERS", "DmypyDaemon", "RungContext", "detect_type_checker"]
