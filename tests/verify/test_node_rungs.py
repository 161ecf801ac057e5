"""The Node toolchain's rungs on tiny real projects made here, with the real tools (npm
installs them once into a cache, node_tools.py): red only for what the change did, HEAD's
findings pre-existing, the affected-test modes of vitest, jest and node's runner, a runner
that dies, and no `node_modules` never green."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder
from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import Layout
from agent_habitat.verify.models import RungName, RungResult
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.snapshot import take_snapshot
from agent_habitat.verify.toolchains import snapshot_of
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.workspace import Workspace
from git_tree import commit_tree, git, write
from node_tools import node_modules

from .node_typescript import typescript_only

pytestmark = pytest.mark.anyio
_IDS = itertools.count(1)

_ESLINT = 'export default [{ rules: { "no-unused-vars": "error", eqeqeq: "error" } }];\n'
_TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "module": "esnext",
        "target": "es2022",
        "moduleResolution": "bundler",
        "skipLibCheck": True,
        # ES5's library (3 files): the target's default, es2022 with the DOM's, is most of
        # what each of the rung's tscs parses; the sources need no more.
        "lib": ["es5"],
    },
    "include": ["src", "test"],
}


def _project(root: Path, files: dict[str, str], *, modules: bool = True, **package: object) -> Path:
    data = {"name": "tiny", "private": True, "type": "module", **package}
    base = {
        "package.json": json.dumps(data),
        ".gitignore": "node_modules/\n",
        **files,
    }
    commit_tree(root, base)
    if modules:
        (root / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    return root


async def _climb(root: Path, rung: RungName, config: LadderConfig | None = None) -> RungResult:
    snapshot = take_snapshot(root)
    ctx = RungContext(
        root=root,
        workspace=Workspace.for_project(root),
        config=config or LadderConfig(),
        policy="standard",
        ladder_id=f"v{next(_IDS)}",  # a spool per climb, as the ladder gives
        snapshot=snapshot,
        touched=snapshot.touched,
        layout=Layout(root=root, packages={}, test_roots=[], is_python=False),
        env=None,
    )
    return await RUNNERS[rung](ctx)


async def test_eslint_red_only_for_the_new_finding_head_s_listed_as_preexisting(
    tmp_path: Path,
) -> None:
    root = _project(
        tmp_path,
        {
            "eslint.config.js": _ESLINT,
            "src/a.js": "export function same(a, b) {\n  return a == b;\n}\n",
        },
        devDependencies={"eslint": "9"},
    )
    write(root, "src/a.js", "// a comment\nexport function same(a, b) {\n  return a == b;\n}\n")
    moved = await _climb(root, "diagnose.files")
    assert moved.state == "green", moved
    assert (moved.new_findings, moved.preexisting_findings) == (0, 1)
    assert moved.baseline is not None
    assert moved.baseline.startswith("HEAD ")
    assert any(n.startswith("node: eslint 9.") for n in moved.notes), moved.notes

    write(root, "src/a.js", "export function same(a, b) {\n  const c = 1;\n  return a == b;\n}\n")
    added = await _climb(root, "diagnose.files")
    assert added.state == "red", added
    assert [(d.code, d.line, d.preexisting) for d in added.diagnostics] == [
        ("no-unused-vars", 2, False),
        ("eqeqeq", 3, True),
    ]
    assert added.reason is not None
    assert "1 new eslint finding(s)" in added.reason


async def test_biome_findings_compared_with_head_in_its_export(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {"biome.json": "{}", "src/e.ts": "export const f = (a: number) => a == 1;\n"},
        devDependencies={"@biomejs/biome": "2"},
    )
    write(root, "src/e.ts", "export const f = (a: number) => a == 1;\ndebugger;\n")
    result = await _climb(root, "diagnose.files")
    assert result.state == "red", result
    assert result.tool == "biome"
    assert [(d.code, d.line, d.preexisting) for d in result.diagnostics] == [
        ("noDebugger", 2, False),
        ("noDoubleEquals", 1, True),
    ]


async def test_tsc_new_type_error_red_head_s_error_preexisting_then_a_fix_is_green(
    tmp_path: Path,
) -> None:
    root = _project(
        tmp_path,
        {
            "tsconfig.json": json.dumps(_TSCONFIG),
            "src/old.ts": "export const n: number = 'x';\n",
            "src/a.ts": "export function twice(x: number): number {\n  return x * 2;\n}\n",
        },
        devDependencies={"typescript": "5"},
    )
    # typescript alone: the other cached tools' 15 @types packages, which this tsconfig reads,
    # tripled the CPU of each of the rung's tscs.
    typescript_only(root)
    write(root, "src/a.ts", "export function twice(x: number): number {\n  return `${x}`;\n}\n")
    red = await _climb(root, "compile.project")
    assert red.state == "red", red
    assert [(d.file, d.code, d.preexisting) for d in red.diagnostics] == [
        ("src/a.ts", "TS2322", False),
        ("src/old.ts", "TS2322", True),
    ]
    assert "--incremental" in red.command
    write(root, "src/a.ts", "export function twice(x: number): number {\n  return x + x;\n}\n")
    green = await _climb(root, "compile.project")
    assert green.state == "green", green
    assert green.preexisting_findings == 1


_ADD = "export function add(a, b) {\n  return a + b;\n}\n"
_OTHER = "export const other = () => 1;\n"


async def test_vitest_related_runs_the_tests_of_the_touched_file_only(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "src/add.js": _ADD,
            "src/other.js": _OTHER,
            "test/add.test.js": (
                "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\n"
                "test('adds', () => { expect(add(1, 2)).toBe(3); });\n"
            ),
        },
        devDependencies={"vitest": "3"},
    )
    write(root, "src/add.js", _ADD.replace("a + b", "a - b"))
    red = await _climb(root, "test.scoped")
    assert (red.state, red.tool) == ("red", "vitest"), red
    assert "related" in red.command
    assert [(d.file, d.code) for d in red.diagnostics] == [("test/add.test.js", "failed")]
    git(root, "checkout", "src/add.js")
    write(root, "src/other.js", "export const other = () => 2;\n")
    none = await _climb(root, "test.scoped")
    assert none.state == "skipped", none
    assert none.reason == "node: vitest found no test related to the change"


async def test_jest_find_related_tests_and_the_test_script_for_the_full_suite(
    tmp_path: Path,
) -> None:
    root = _project(
        tmp_path,
        {
            "src/add.js": "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n",
            "src/add.test.js": (
                "const { add } = require('./add');\n"
                "test('adds', () => expect(add(1, 2)).toBe(3));\n"
            ),
        },
        devDependencies={"jest": "30"},
        scripts={"test": "jest --ci"},
        type="commonjs",
    )
    write(
        root,
        "src/add.js",
        "function add(a, b) {\n  return a + b + 1;\n}\nmodule.exports = { add };\n",
    )
    scoped = await _climb(root, "test.scoped")
    assert (scoped.state, scoped.tool) == ("red", "jest"), scoped
    assert "--findRelatedTests" in scoped.command
    assert scoped.diagnostics[0].file == "src/add.test.js"
    full = await _climb(root, "test.full")
    assert full.state == "red", full
    assert full.command[-2:] == ["run", "test"]
    assert [d.file for d in full.diagnostics] == ["src/add.test.js"]


async def test_a_green_jest_run_says_how_many_of_its_tests_passed(tmp_path: Path) -> None:
    # tiny-invariant 1.3.3: a green verify said "tsc, jest" and not what jest checked, where
    # cargo's and pytest's say "6 passed"; its related tests were 8 of the suite's 10.
    add = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n"
    test = "const { add } = require('./add');\ntest('adds', () => expect(add(1, 2)).toBe(3));\n"
    root = _project(
        tmp_path,
        {"src/add.js": add, "src/add.test.js": test + "test.skip('later', () => {});\n"},
        devDependencies={"jest": "30"},
        type="commonjs",
    )
    write(root, "src/add.js", add.replace("a + b", "b + a"))
    green = await _climb(root, "test.scoped")
    assert (green.state, green.tool) == ("green", "jest"), green
    assert any("2 test(s) ran, 1 passed" in n for n in green.notes), green.notes


_TAP_HARNESS = """\
import { add } from '../src/add.mjs';
console.log('TAP version 13');
console.log('# adds');
const got = add(1, 2);
if (got !== 3) {
  const at = new Error().stack.split('\\n')[1].trim().replace(/^at /, '');
  console.log('not ok 1 should be equal');
  console.log(`  ---\\n    expected: 3\\n    actual: ${got}\\n    at: ${at}\\n  ...`);
  process.exitCode = 1;
} else {
  console.log('ok 1 should be equal');
}
"""


async def test_a_runner_without_an_affected_test_mode_runs_the_test_script_never_green_unrun(
    tmp_path: Path,
) -> None:
    # qs 6.13 (tape): its scoped rung was `skipped` and the ladder green over a failing test.
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP_HARNESS},
        scripts={"test": "node test/run.mjs"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "a * b"))
    red = await _climb(root, "test.scoped")
    assert (red.state, red.tool) == ("red", "npm test"), red
    line = (
        _TAP_HARNESS.splitlines().index(
            next(ln for ln in _TAP_HARNESS.splitlines() if "new Error" in ln)
        )
        + 1
    )
    assert [(d.file, d.line) for d in red.diagnostics] == [("test/run.mjs", line)]
    assert red.diagnostics[0].message == "adds: should be equal: expected 3, actual 2"
    assert any("its whole test script ran" in n for n in red.notes), red.notes
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    green = await _climb(root, "test.scoped")
    assert (green.state, green.diagnostics) == ("green", []), green


async def test_the_scoped_test_script_runs_without_its_npm_pre_and_post_hooks(
    tmp_path: Path,
) -> None:
    # minimist 1.2.8: `npm run test` ran pretest (eslint over the repository) and posttest
    # (`aud --production`, an audit over the network): 29 s, and red whenever an advisory
    # appears, whatever the change did. The scoped rung runs the tests; test.full keeps them.
    hooks = {"pretest": "node -e process.exit(4)", "posttest": "node -e process.exit(5)"}
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP_HARNESS},
        scripts={"test": "node test/run.mjs", **hooks},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    green = await _climb(root, "test.scoped")
    assert (green.state, green.tool) == ("green", "npm test"), green
    assert any("pretest, posttest left out" in n for n in green.notes), green.notes
    full = await _climb(root, "test.full")
    assert full.state != "green", full


async def test_a_test_script_failing_the_same_way_at_head_naming_no_test_is_an_error_not_red(
    tmp_path: Path,
) -> None:
    # side-channel 1.1.1: its pretest's `tsc -p .` fails at HEAD (typescript@next is not
    # served); ci_parity's test.full was red for it, whatever the change did.
    lint = "console.error('index.js(45,2): error TS2322'); process.exit(2);\n"
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP_HARNESS, "lint.mjs": lint},
        scripts={"test": "node test/run.mjs", "pretest": "node lint.mjs"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    full = await _climb(root, "test.full")
    assert full.state == "error", full
    assert full.reason is not None
    assert "fails on HEAD" in full.reason
    assert "none of its tests was checked" in full.reason
    # The same exit code with other last lines is a failure of the change's own.
    write(root, "lint.mjs", lint.replace("TS2322", "TS2554"))
    red = await _climb(root, "test.full")
    assert red.state == "red", red
    assert any("not the same failure, so it stays red" in n for n in red.notes), red.notes


async def test_a_pretest_that_asks_git_for_the_files_fails_on_head_as_in_the_checkout(
    tmp_path: Path,
) -> None:
    # side-channel 1.1.1's prelint: `eclint check $(git ls-files | ...)`. In HEAD's export, no
    # checkout, git answered "not a repository" and the script failed otherwise (exit 255):
    # the same failure at HEAD read as the change's.
    lint = (
        "import { execSync } from 'node:child_process';\n"
        "const files = execSync('git ls-files', { encoding: 'utf8' }).trim().split('\\n');\n"
        "console.error(`lint: ${files.length} files; index.js(45,2): error TS2322`);\n"
        "process.exit(2);\n"
    )
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP_HARNESS, "lint.mjs": lint},
        scripts={"test": "node test/run.mjs", "pretest": "node lint.mjs"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    full = await _climb(root, "test.full")
    assert full.state == "error", full
    assert full.reason is not None
    assert "fails on HEAD" in full.reason


async def test_a_workspace_with_no_test_runner_and_no_test_script_says_there_is_nothing_to_run(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, {"src/add.mjs": _ADD})
    write(root, "src/add.mjs", _ADD.replace("a + b", "a * b"))
    result = await _climb(root, "test.scoped")
    assert result.state == "skipped", result
    assert result.reason is not None
    assert "no test script" in result.reason


async def test_node_test_runner_on_the_importing_test_files_and_a_death_is_died(
    tmp_path: Path,
) -> None:
    root = _project(
        tmp_path,
        {
            "src/add.mjs": _ADD,
            "src/other.mjs": _OTHER,
            "test/add.test.mjs": (
                "import test from 'node:test';\nimport assert from 'node:assert';\n"
                "import { add } from '../src/add.mjs';\n"
                "test('adds', () => assert.strictEqual(add(1, 2), 3));\n"
            ),
            "test/other.test.mjs": (
                "import test from 'node:test';\nimport { other } from '../src/other.mjs';\n"
                "test('other', () => {\n"
                "  if (other() !== 1) process.kill(process.ppid, 'SIGKILL');\n});\n"
            ),
        },
        scripts={"test": "node --test"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "a * b"))
    red = await _climb(root, "test.scoped")
    assert (red.state, red.tool) == ("red", "node-test"), red
    assert [str(root / "test/add.test.mjs")] == [a for a in red.command if a.endswith(".mjs")]
    assert [(d.file, d.line) for d in red.diagnostics] == [("test/add.test.mjs", 4)]
    git(root, "checkout", "src/add.mjs")
    write(root, "src/other.mjs", "export const other = () => 2;\n")
    died = await _climb(root, "test.scoped")
    assert (died.state, died.signal) == ("died", "SIGKILL"), died


async def test_no_node_modules_is_skipped_with_the_install_command_never_green(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, {"src/a.ts": "export const a = 1;\n"}, modules=False)
    (root / "package-lock.json").write_text("{}", encoding="utf-8")
    write(root, "src/a.ts", "export const a = 2;\n")
    rungs: tuple[RungName, ...] = ("diagnose.files", "compile.project", "test.scoped", "test.full")
    for rung in rungs:
        result = await _climb(root, rung)
        assert (result.state, result.missing) == ("skipped", f"`npm ci` in {root}"), result
        assert result.reason is not None
        assert "node_modules is missing" in result.reason


async def test_a_configured_command_wins_over_the_toolchain(tmp_path: Path) -> None:
    root = _project(tmp_path, {"src/a.js": "export const a = 1;\n"}, modules=False)
    write(root, "src/a.js", "export const a = 2;\n")
    config = LadderConfig.model_validate({"test.scoped": "echo configured"})
    result = await _climb(root, "test.scoped", config)
    assert (result.state, result.tool) == ("green", "configured"), result


async def test_the_ladder_climbs_a_node_project_through_the_toolchain_registry(
    tmp_path: Path,
) -> None:
    root = _project(
        tmp_path,
        {"eslint.config.js": _ESLINT, "src/a.js": "export const a = 1;\n", "README.md": "x\n"},
        devDependencies={"eslint": "9"},
    )
    write(root, "src/a.js", "export const a = 1;\nconst b = 2;\n")
    write(root, "README.md", "y\n")
    result = await run_ladder(root, LadderRequest(policy="minimal"), bus=InMemoryEventBus("t"))
    assert result.state == "red", result
    (lint,) = result.rungs
    assert (lint.tool, lint.diagnostics[0].code) == ("eslint", "no-unused-vars")
    write(root, "dist/bundle.js", "x\n")  # a build's output, not in .gitignore
    assert "dist/bundle.js" in take_snapshot(root).touched
    assert "dist/bundle.js" not in snapshot_of(root).touched


async def test_a_node_verdict_s_selection_is_what_its_test_rung_chose(
    tmp_path: Path,
) -> None:
    # minimist 1.2.8: "selection: whole suite: not a Python project: the import graph cannot
    # see the change" beside a rung whose own notes say what it chose (here the whole test
    # script; with vitest, `vitest related`, which that line contradicted).
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": _TAP_HARNESS},
        scripts={"test": "node test/run.mjs"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    result = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    scoped = next(r for r in result.rungs if r.rung == "test.scoped")
    assert (result.state, scoped.state) == ("green", "green"), result
    assert result.selection is not None
    assert result.selection.full, result.selection
    assert result.selection.reasons == [
        "no vitest, jest or node test runner in tiny, so no affected-test mode: "
        "its whole test script ran"
    ]


@pytest.mark.parametrize(
    ("runner", "test_file"),
    [
        (
            "vitest",
            "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\n"
            "test.skip('adds', () => { expect(add(1, 2)).toBe(3); });\n",
        ),
        (
            "node-test",
            "import test from 'node:test';\nimport assert from 'node:assert';\n"
            "import { add } from '../src/add.js';\n"
            "test('adds', { skip: 'later' }, () => assert.strictEqual(add(1, 2), 3));\n",
        ),
    ],
)
async def test_a_run_whose_every_related_test_was_skipped_checked_nothing(
    tmp_path: Path, runner: str, test_file: str
) -> None:
    # Green means something was checked: the runner passes a run whose every test is
    # skipped, which ran no assertion; the rung is skipped and says so, never green.
    files = {"src/add.js": _ADD, "test/add.test.js": test_file}
    if runner == "vitest":
        root = _project(tmp_path, files, devDependencies={"vitest": "3"})
    else:
        root = _project(tmp_path, files, scripts={"test": "node --test"})
    write(root, "src/add.js", _ADD.replace("a + b", "a - b"))
    result = await _climb(root, "test.scoped")
    assert result.state == "skipped", (runner, result)
    assert result.reason is not None
    assert "every test it ran was skipped (1 skipped" in result.reason, result.reason


async def test_a_tap_script_says_how_many_passed_and_one_that_ran_none_checked_nothing(
    tmp_path: Path,
) -> None:
    # qs 6.13 (tape): a green test script said "npm test" and nothing of the 739 assertions
    # tape counted; tape's summary of a run whose every test was skipped is `# pass 0`.
    summary = "console.log('# tests ' + N + '\\n# pass  ' + N + '\\n\\n# ok');\n"
    harness = "const N = Number(process.env.TESTS_RUN ?? '2');\n" + summary
    root = _project(
        tmp_path,
        {"src/add.mjs": _ADD, "test/run.mjs": harness},
        scripts={"test": "node test/run.mjs"},
    )
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    green = await _climb(root, "test.scoped")
    assert green.state == "green", green
    assert "node: TAP summary: 2 passed" in green.notes, green.notes
    write(root, "test/run.mjs", harness.replace("'2'", "'0'"))
    idle = await _climb(root, "test.scoped")
    assert idle.state == "skipped", idle
    assert idle.reason is not None
    assert "nothing was checked" in idle.reason, idle.reason


_TESTS = "test('adds', () => { expect(add(1, 2)).toBe(3); });\n"
_FAILING_AT_HEAD = "test('broken at HEAD', () => { expect(add(2, 2)).toBe(5); });\n"


@pytest.mark.parametrize("runner", ["vitest", "jest"])
async def test_a_test_failing_at_head_is_not_red_a_new_failure_is(
    tmp_path: Path, runner: str
) -> None:
    # A new user's Node trial: the Node test rung asked HEAD about no failure, so a test
    # already failing at HEAD made every verify that selected it red (Go, Rust and Python
    # compare with HEAD, rungs/head_tests.py).
    if runner == "vitest":
        head = "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\n"
        files = {"src/add.js": _ADD, "test/add.test.js": head + _TESTS + _FAILING_AT_HEAD}
        root = _project(tmp_path, files, devDependencies={"vitest": "3"})
        source, test = "src/add.js", "test/add.test.js"
    else:
        add = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n"
        head = "const { add } = require('./add');\n"
        files = {"src/add.js": add, "src/add.test.js": head + _TESTS + _FAILING_AT_HEAD}
        root = _project(tmp_path, files, devDependencies={"jest": "30"}, type="commonjs")
        source, test = "src/add.js", "src/add.test.js"
    original = (root / source).read_text(encoding="utf-8")
    write(root, source, original.replace("a + b", "b + a"))
    green = await _climb(root, "test.scoped")
    assert (green.state, green.tool) == ("green", runner), green
    assert green.reason is not None
    assert "already failing at HEAD" in green.reason, green.reason
    assert [(d.file, d.preexisting) for d in green.diagnostics] == [(test, True)]
    write(root, source, original.replace("a + b", "a - b"))
    red = await _climb(root, "test.scoped")
    assert red.state == "red", red
    assert red.baseline is not None
    assert red.baseline.startswith("HEAD "), red.baseline
    assert sorted((d.message.split(": ")[0], d.preexisting) for d in red.diagnostics) == [
        (f"{test} > adds", False),
        (f"{test} > broken at HEAD", True),
    ], red.diagnostics
    assert (red.new_findings, red.preexisting_findings) == (1, 1)


async def test_a_node_test_failing_at_head_is_not_red_a_new_failure_is(tmp_path: Path) -> None:
    # The node test runner's junit report names a test by its own name: the same name in a
    # describe block and in another file must not be taken for the test HEAD fails.
    head = (
        "import { test, describe } from 'node:test';\nimport assert from 'node:assert';\n"
        "import { add } from '../src/add.mjs';\n"
    )
    body = (
        "test('adds', () => assert.strictEqual(add(1, 2), 3));\n"
        "test('broken at HEAD', () => assert.strictEqual(add(2, 2), 5));\n"
        "describe('group', () => {\n"
        "  test('broken at HEAD', () => assert.strictEqual(add(0, 1), 1));\n});\n"
    )
    other = head + "test('broken at HEAD', () => assert.strictEqual(add(1, 1), 2));\n"
    files = {"src/add.mjs": _ADD, "test/add.test.mjs": head + body, "test/b.test.mjs": other}
    root = _project(tmp_path, files, scripts={"test": "node --test"})
    write(root, "src/add.mjs", _ADD.replace("a + b", "b + a"))
    green = await _climb(root, "test.scoped")
    assert (green.state, green.tool) == ("green", "node-test"), green
    assert green.reason is not None
    assert "already failing at HEAD" in green.reason, green.reason
    assert [(d.message.split(": ")[0], d.preexisting) for d in green.diagnostics] == [
        ("test/add.test.mjs > broken at HEAD", True)
    ]
    write(root, "src/add.mjs", _ADD.replace("a + b", "a * b"))
    red = await _climb(root, "test.scoped")
    assert red.state == "red", red
    assert red.baseline is not None
    assert red.baseline.startswith("HEAD "), red.baseline
    assert sorted((d.message.split(": ")[0], d.preexisting) for d in red.diagnostics) == [
        ("test/add.test.mjs > adds", False),
        ("test/add.test.mjs > broken at HEAD", True),
        ("test/add.test.mjs > group > broken at HEAD", False),
        ("test/b.test.mjs > broken at HEAD", False),
    ], red.diagnostics
    assert (red.new_findings, red.preexisting_findings) == (3, 1)
