"""The TypeScript/JavaScript toolchain (issue 27): a project with a `package.json`.

detect.py: package manager by lockfile, workspaces, the configured linter and test runner,
  binaries from the project's own `node_modules/.bin`.
parsers.py: eslint/biome JSON, tsc lines, jest-shaped JSON (vitest, jest), node's JUnit.
common.py: the rungs' preamble (configured command, no `node_modules`), tool notes, HEAD's
  export with `node_modules` linked in, merging per-workspace results.
lint.py: `diagnose.files` (eslint or biome; HEAD's content linted where the deps are).
compile.py: `compile.project` (incremental `tsc --noEmit`) and `build.affected`.
graph.py: relative-import graph, for the node test runner's related tests.
suite.py: `test.scoped` (vitest related, jest --findRelatedTests, node --test) and
  `test.full` (the `test` script).
"""

from collections.abc import Awaitable, Callable

from ...models import RungName, RungResult
from ...rungs.context import RungContext
from .compile import build_affected, compile_project
from .detect import IGNORES, is_node_project, owns
from .lint import diagnose_files
from .suite import full_suite, scoped_suite

__all__ = ["IGNORES", "RUNNERS", "is_node_project", "owns"]

RUNNERS: dict[RungName, Callable[[RungContext], Awaitable[RungResult]]] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
