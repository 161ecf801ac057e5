"""The TypeScript/JavaScript toolchain (issue 27): a project with a `package.json`.

detect.py: package manager by lockfile, workspaces, the configured linter and test runner,
  binaries from the project's own `node_modules/.bin`.
parsers.py: eslint/biome JSON, tsc lines, jest-shaped JSON (vitest, jest), node's JUnit.
tap.py: TAP's `not ok` lines (tape, tap, …), for a test script whose runner we do not know.
common.py: the rungs' preamble (configured command, no `node_modules`), tool notes, HEAD's
  export with `node_modules` linked in, merging per-workspace results.
lint.py: `diagnose.files` (eslint or biome; HEAD's content linted where the deps are).
eslint_warm.py + eslint_warm.cjs: the warm eslint a habitat server keeps per linted
  configuration folder (the project's own eslint's Node API), with the same lifecycle.
compile.py: `compile.project` (`tsc --noEmit`: warm in a habitat server, incremental
  cold) and `build.affected`.
tsc_warm.py + tsc_warm.cjs: the warm tsc a habitat server keeps per checked workspace (the
  project's own typescript's compiler API), with the warm checkers' lifecycle.
jest_warm.py + jest_warm.cjs: the warm jest a habitat server keeps per workspace that runs
  jest (jest's own `runCLI`, its configuration loaded once; the tests in its workers).
jest_config.py: whether its `jest.config.ts` may load without ts-node's type check (HEAD's
  own, as are the tsconfigs that check reads).
stdio_rpc.cjs: what the warm processes' scripts share: JSON-RPC in LSP framing on stdio.
race.py: a check while the warm-up still starts the warm checker: the tool's cold run beside
  it, the first answer taken.
comments.py + comments.cjs: whether a change is only comments nothing reads (the project's
  typescript parses HEAD's text and the tree's): then no type check or test runs.
graph.py: relative-import graph, for the node test runner's related tests.
suite.py: `test.scoped` (vitest related, jest --findRelatedTests, warm in a habitat server,
  node --test; another runner: the workspace's whole `test` script) and `test.full` (the
  `test` script).
head_tests.py: a red vitest, jest or node test runner's failed tests run on HEAD's export:
  those HEAD fails too are already failing, not red.
head_ahead.py + failed_stream.cjs: the warm jest tells each file's failed tests as the file
  ends, and HEAD's run of them starts then, beside the rest of the tree's run.
script_head.py: a red `test` script run again on HEAD's export: its failures HEAD names too
  are already failing; one that names no test and fails there the same way is `error`.
node_test_keys.cjs: the node test runner's reporter of each test's file and full name.
rungs.py: the rung table (imported on first climb: this package's import stays light for
  the snapshot and the watcher, which only ask `detect` and `owns`).
"""

from ..base import LazyRunners, Toolchain
from .detect import IGNORES, is_node_project, owns

__all__ = ["NODE"]

NODE = Toolchain(
    name="node",
    detect=is_node_project,
    owns=owns,
    runners=LazyRunners("agent_habitat.verify.toolchains.node.rungs", "RUNNERS"),
    ignores=IGNORES,
)
