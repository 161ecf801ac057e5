"""A workspace's `jest.config.ts` is compiled without ts-node's type check only when it and
every tsconfig ts-node reads are HEAD's own and it imports no local module
(toolchains/node/jest_config.py): its type errors are then HEAD's too. The warm jest sets
`TS_NODE_TRANSPILE_ONLY` for the configuration's load only: jest's workers, where the tests
run, never see it (real jest; the decision is the one seam replaced there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.toolchains.node import jest_config, jest_warm
from agent_habitat.verify.toolchains.node.detect import load_project
from agent_habitat.verify.toolchains.node.jest_config import (
    cache_args,
    head_env,
    transpiled_config,
)
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from agent_habitat.workspace import Workspace
from git_tree import commit_tree, write
from node_warm import rung_ctx, tiny_project

pytestmark = pytest.mark.anyio

_CONFIG = (
    "import type { Config } from 'jest';\nconst config: Config = {};\nexport default config;\n"
)
_TSCONFIG = json.dumps({"compilerOptions": {"strict": True}})


def _decide(root: Path) -> str | None:
    project = load_project(root)
    assert project is not None
    return transpiled_config(rung_ctx(root, server=True), project, project.workspaces[0])


def test_only_head_s_own_configuration_importing_nothing_local_is_transpiled(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    package = json.dumps({"name": "tiny", "private": True, "devDependencies": {"jest": "30"}})
    files = {"package.json": package, "jest.config.ts": _CONFIG, "tsconfig.json": _TSCONFIG}
    commit_tree(root, files)
    assert _decide(root) == "jest.config.ts"
    # The change edits the configuration, or the tsconfig ts-node reads: type-checked.
    write(root, "jest.config.ts", _CONFIG + "const unused: number = 'a';\n")
    assert _decide(root) is None
    write(root, "jest.config.ts", _CONFIG)
    write(root, "tsconfig.json", _TSCONFIG.replace("true", "false"))
    assert _decide(root) is None
    write(root, "tsconfig.json", _TSCONFIG)
    assert _decide(root) == "jest.config.ts"


@pytest.mark.parametrize(
    "files",
    [
        # a local module, whose text the check reads too
        {"jest.config.ts": "import shared from './jest.shared';\nexport default shared;\n"},
        # a loader of its own, or ts-node's own settings, or a local base tsconfig
        {"jest.config.ts": "/** @jest-config-loader esbuild-register */\n" + _CONFIG},
        {"tsconfig.json": json.dumps({"ts-node": {"files": True}})},
        {"tsconfig.json": json.dumps({"extends": "./tsconfig.base.json"})},
        # not TypeScript: nothing to type-check
        {"jest.config.ts": None, "jest.config.js": "module.exports = {};\n"},
    ],
)
def test_a_configuration_the_check_could_read_otherwise_is_type_checked(
    tmp_path: Path, files: dict[str, str | None]
) -> None:
    root = tmp_path / "p"
    base = {
        "package.json": json.dumps({"name": "tiny", "private": True}),
        "jest.config.ts": _CONFIG,
        "tsconfig.json": _TSCONFIG,
    }
    merged = {k: v for k, v in {**base, **files}.items() if v is not None}
    commit_tree(root, merged)
    assert _decide(root) is None


# The configuration and a test each write what they saw of ts-node's two variables.
_SEEN = "String([process.env.TS_NODE_TRANSPILE_ONLY, process.env.TS_NODE_LOG_ERROR])"
_PROBE_CONFIG = (
    f"require('fs').writeFileSync(process.env.JEST_PROBE_CONFIG, {_SEEN});\n"
    "module.exports = {};\n"
)
_PROBE_TEST = (
    "test('sees', () => { require('fs').writeFileSync(process.env.JEST_PROBE_TEST, "
    + _SEEN
    + "); });\n"
)


@pytest.mark.timeout(600)  # jest's start on a loaded 2-core machine
async def test_the_warm_jest_transpiles_only_the_configuration_s_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = json.dumps({"name": "tiny", "private": True, "devDependencies": {"jest": "30"}})
    files = {
        "package.json": package,
        ".gitignore": "node_modules/\n",
        "jest.config.js": _PROBE_CONFIG,
        "src/a.test.js": _PROBE_TEST,
    }
    root = tiny_project(tmp_path / "p", files)
    seen_config, seen_test = tmp_path / "config.txt", tmp_path / "test.txt"
    monkeypatch.setenv("JEST_PROBE_CONFIG", str(seen_config))
    monkeypatch.setenv("JEST_PROBE_TEST", str(seen_test))
    monkeypatch.delenv("TS_NODE_TRANSPILE_ONLY", raising=False)
    monkeypatch.delenv("TS_NODE_LOG_ERROR", raising=False)
    monkeypatch.setattr(jest_warm, "transpiled_config", lambda *_: "jest.config.js")
    write(root, "src/a.test.js", _PROBE_TEST + "// touched\n")
    workspace = Workspace.for_project(root)
    try:
        green = await RUNNERS["test.scoped"](rung_ctx(root, server=True))
        assert (green.state, green.tool) == ("green", "jest"), green
        said = " ".join(green.notes)
        assert "the warm runner" in said, green.notes
        assert "jest.config.js is HEAD's own" in said, green.notes
        assert seen_config.read_text(encoding="utf-8") == "true,true"
        assert seen_test.read_text(encoding="utf-8") == ","
    finally:
        await warm_checker.release(workspace)


def test_a_cold_jest_is_given_the_kept_cache_unless_its_configuration_names_one(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    package = {"name": "tiny", "private": True, "devDependencies": {"jest": "30"}}
    commit_tree(
        root, {"package.json": json.dumps(package), "jest.config.js": "module.exports = {};\n"}
    )
    ctx = rung_ctx(root, server=False)
    [flag] = cache_args(ctx, root)
    kept = ctx.workspace.state_dir / "jest-cache"
    assert flag == f"--cacheDirectory={kept}"
    assert kept.is_dir()
    # The project's own folder wins, in its jest configuration or package.json's "jest" key.
    write(root, "jest.config.js", "module.exports = { cacheDirectory: '/tmp/mine' };\n")
    assert cache_args(ctx, root) == []
    write(root, "jest.config.js", "module.exports = {};\n")
    package["jest"] = {"cacheDirectory": "/tmp/mine"}
    write(root, "package.json", json.dumps(package))
    assert cache_args(ctx, root) == []


def test_head_s_run_is_transpiled_only_when_the_tree_s_configuration_may_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "p"
    package = json.dumps({"name": "tiny", "private": True, "devDependencies": {"jest": "30"}})
    commit_tree(
        root, {"package.json": package, "jest.config.ts": _CONFIG, "tsconfig.json": _TSCONFIG}
    )
    project = load_project(root)
    assert project is not None
    ctx, ws = rung_ctx(root, server=False), project.workspaces[0]
    monkeypatch.delenv("TS_NODE_TRANSPILE_ONLY", raising=False)
    monkeypatch.delenv("TS_NODE_LOG_ERROR", raising=False)
    both = {"TS_NODE_TRANSPILE_ONLY": "true", "TS_NODE_LOG_ERROR": "true"}
    assert head_env(ctx, project, ws) == both
    monkeypatch.setenv("TS_NODE_TRANSPILE_ONLY", "false")  # the user's own wins
    assert head_env(ctx, project, ws) == {"TS_NODE_LOG_ERROR": "true"}
    write(root, "jest.config.ts", _CONFIG + "const unused: number = 'a';\n")
    assert head_env(ctx, project, ws) == {}


# The configuration appends where it was loaded and what it saw of ts-node's variables.
_WHERE_CONFIG = (
    "require('fs').appendFileSync(process.env.JEST_PROBE_CONFIG, "
    f"process.cwd() + ' ' + {_SEEN} + '\\n');\nmodule.exports = {{}};\n"
)
_ADD = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n"
_ADD_TEST = "const { add } = require('./add');\ntest('adds', () => expect(add(1, 2)).toBe(3));\n"


@pytest.mark.timeout(600)  # two cold jest runs on a loaded 2-core machine
async def test_a_red_cold_run_and_head_s_run_keep_jest_s_cache_head_s_is_transpiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ms 3.0.0: HEAD's run of a red run's failed tests was a cold CLI that type-checked
    # HEAD's own jest.config.ts and, under the substrate's fresh TMPDIR, had no cache.
    package = {"name": "tiny", "private": True, "type": "commonjs"}
    package["devDependencies"] = {"jest": "30"}
    files = {
        "package.json": json.dumps(package),
        ".gitignore": "node_modules/\n",
        "jest.config.js": _WHERE_CONFIG,
        "src/add.js": _ADD,
        "src/add.test.js": _ADD_TEST,
    }
    root = tiny_project(tmp_path / "p", files)
    seen = tmp_path / "config.txt"
    monkeypatch.setenv("JEST_PROBE_CONFIG", str(seen))
    monkeypatch.delenv("TS_NODE_TRANSPILE_ONLY", raising=False)
    monkeypatch.delenv("TS_NODE_LOG_ERROR", raising=False)
    monkeypatch.setattr(jest_config, "transpiled_config", lambda *_: "jest.config.js")
    write(root, "src/add.js", _ADD.replace("a + b", "a - b"))
    red = await RUNNERS["test.scoped"](rung_ctx(root, server=False))
    assert (red.state, red.tool) == ("red", "jest"), red
    assert red.baseline is not None
    assert red.baseline.startswith("HEAD "), red.baseline
    kept = Workspace.for_project(root).state_dir / "jest-cache"
    assert any(p.name.startswith("haste-map") for p in kept.iterdir()), list(kept.iterdir())
    tree, head = seen.read_text(encoding="utf-8").splitlines()
    assert tree == f"{root} ,"  # the tree's run: the CLI as it is
    where, said = head.rsplit(" ", 1)
    assert Path(where) != root  # HEAD's export, transpiled:
    assert said == "true,true"
