"""A change of JS/TS files that is only comments nothing reads (toolchains/node/comments.py):
`compile.project` and `test.scoped` have nothing to do; a comment a tool or a test may read
(a directive, a pragma, a comment inside a function, a file the project reads as data) runs
them as any change. The real typescript parser and the real rungs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_habitat.verify.models import RungName, RungResult
from agent_habitat.verify.toolchains.node.comments import SCRIPT, _ask, _parser
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from git_tree import write
from node_tools import node_modules
from node_warm import rung_ctx, tiny_project

pytestmark = pytest.mark.anyio

_BASE = (
    "/** Adds. */\nexport function add(a: number, b: number) {\n  return a + b;\n}\n"
    "const re = /a\\/\\/b/;\nexport const f = (x: number) => x + 1;\nexport { re };\n"
)


def _typescript() -> Path:
    return node_modules() / "typescript"


_CASES: list[tuple[str, str, str | None]] = [
    ("// a note\n" + _BASE, "a.ts", None),
    (_BASE.replace("Adds.", "Adds two numbers."), "a.ts", None),
    (_BASE + "// the end\n", "a.ts", None),
    ("/** @type {string} */\n" + _BASE, "a.js", "a comment a tool may read"),
    ("// @ts-expect-error\n" + _BASE, "a.ts", "a comment a tool may read"),
    ('/// <reference types="node" />\n' + _BASE, "a.ts", "a comment a tool may read"),
    ("/*! MIT */\n" + _BASE, "a.ts", "a comment a tool may read"),
    (_BASE + "//# sourceMappingURL=a.js.map\n", "a.ts", "a comment a tool may read"),
    ("/* istanbul ignore next */\n" + _BASE, "a.ts", "a comment a tool may read"),
    ("// eslint-disable-next-line\n" + _BASE, "a.ts", "a comment a tool may read"),
    ("/* @__PURE__ */\n" + _BASE, "a.ts", "a comment a tool may read"),
    ("/** @jsx h */\n" + _BASE, "a.tsx", "a comment a tool may read"),
    (_BASE.replace("return a", "// sum\n  return a"), "a.ts", "inside a function"),
    (_BASE.replace("=> x", "=> /* c */ x"), "a.ts", "inside a function"),
    (_BASE.replace("a + b", "a - b"), "a.ts", "its code changed"),
    (_BASE.replace("return a + b;", "return\n  a + b;"), "a.ts", "its code changed"),
    (_BASE.replace("a\\/\\/b", "a\\/\\/c"), "a.ts", "its code changed"),
    (_BASE.replace("return a", "return )a"), "a.ts", "does not parse"),
]


async def test_the_parser_tells_prose_comments_from_what_is_read(tmp_path: Path) -> None:
    # One parser process for every case, each its own file.
    files = {f"c{i}/{path}": (_BASE, now) for i, (now, path, _) in enumerate(_CASES)}
    answer = await _parser(_typescript(), files, tmp_path)
    assert isinstance(answer, dict), answer
    said = {a["path"]: a["why"] for a in answer["files"]}
    for i, (_, path, why) in enumerate(_CASES):
        got = said[f"c{i}/{path}"]
        if why is None:
            assert got == "", (i, got)
        else:
            assert why in got, (i, got)
    assert answer["same"] is False
    assert await _ask(_typescript(), {"a.ts": (_BASE, _CASES[0][0])}, tmp_path) is None


def test_the_parser_script_is_packaged() -> None:
    assert SCRIPT.is_file()


_ADD = "/** Adds. */\nexport function add(a, b) {\n  return a + b;\n}\n"
_TEST = (
    "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\n"
    "test('adds', () => { expect(add(1, 2)).toBe(3); });\n"
)


def _project(root: Path, test: str = _TEST) -> Path:
    package = {"name": "tiny", "private": True, "type": "module", "devDependencies": {}}
    package["devDependencies"] = {"vitest": "3", "typescript": "5"}
    tsconfig = {"compilerOptions": {"allowJs": True, "noEmit": True, "strict": False}}
    files = {
        "package.json": json.dumps(package),
        "tsconfig.json": json.dumps(tsconfig),
        ".gitignore": "node_modules\n",  # the linked folder is a symlink: no trailing slash
        "src/add.js": _ADD,
        "test/add.test.js": test,
    }
    return tiny_project(root, files)


async def _rung(root: Path, rung: RungName) -> RungResult:
    return await RUNNERS[rung](rung_ctx(root, server=False))


@pytest.mark.timeout(600)
async def test_a_prose_comment_runs_no_type_check_and_no_test(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    write(root, "src/add.js", "// A note for the reader.\n" + _ADD.replace("Adds.", "Adds two."))
    rungs: tuple[RungName, ...] = ("compile.project", "test.scoped")
    for rung in rungs:
        result = await _rung(root, rung)
        assert result.state == "skipped", result
        assert result.reason is not None
        assert "the change is only comments in 1 JavaScript/TypeScript file(s)" in result.reason


@pytest.mark.timeout(600)
async def test_a_comment_a_test_may_read_runs_the_tests(tmp_path: Path) -> None:
    # The test reads the source as text: a comment there is its data.
    reads = _TEST + (
        "import { readFileSync } from 'node:fs';\n"
        "test('documented', () => {\n"
        "  const text = readFileSync(new URL('../src/add.js', import.meta.url), 'utf8');\n"
        "  expect(text).toContain('Adds.');\n});\n"
    )
    root = _project(tmp_path / "p", reads)
    write(root, "src/add.js", _ADD.replace("Adds.", "Sums."))
    red = await _rung(root, "test.scoped")
    assert (red.state, red.tool) == ("red", "vitest"), red
    # A comment inside the function: its toString() shows it.
    root = _project(tmp_path / "q")
    write(root, "src/add.js", _ADD.replace("return a", "// the sum\n  return a"))
    ran = await _rung(root, "test.scoped")
    assert (ran.state, ran.tool) == ("green", "vitest"), ran
