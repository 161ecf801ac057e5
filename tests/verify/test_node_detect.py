"""What the Node toolchain reads from a project's files: what it owns, its package manager
and install command, its workspaces and which the change affects, its linter and test
runner, its own binaries, and the import graph the node test runner's selection follows."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_habitat.verify.toolchains.node.detect import (
    find_bin,
    install_command,
    is_node_project,
    load_project,
    owns,
    package_manager,
)
from agent_habitat.verify.toolchains.node.graph import is_test_file, related_tests


def _package(folder: Path, **data: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps(data), encoding="utf-8")


def test_sources_and_configuration_are_owned_build_outputs_are_not() -> None:
    for rel in ("src/a.ts", "a.mjs", "lib/x.cjs", "c.tsx", "package.json", "tsconfig.json"):
        assert owns(rel), rel
    for rel in ("eslint.config.js", "vitest.config.mts", "tsconfig.build.json", "yarn.lock"):
        assert owns(rel), rel
    for rel in ("node_modules/x/index.js", "dist/a.js", "app/.next/a.js", "a.py", "README.md"):
        assert not owns(rel), rel


def test_the_package_manager_comes_from_the_lockfile_then_package_json(tmp_path: Path) -> None:
    _package(tmp_path, name="p")
    assert not is_node_project(tmp_path / "nowhere")
    assert (package_manager(tmp_path), install_command(tmp_path)) == ("npm", "npm install")
    (tmp_path / "package-lock.json").write_text("{}", encoding="utf-8")
    assert install_command(tmp_path) == "npm ci"
    (tmp_path / "pnpm-lock.yaml").write_text("", encoding="utf-8")
    assert (package_manager(tmp_path), install_command(tmp_path)) == ("pnpm", "pnpm install")
    other = tmp_path / "other"
    _package(other, name="o", packageManager="yarn@4.1.0")
    assert package_manager(other) == "yarn"


def test_workspaces_from_package_json_and_the_affected_ones_follow_dependents(
    tmp_path: Path,
) -> None:
    _package(tmp_path, name="root", workspaces=["packages/*"])
    _package(tmp_path / "packages" / "core", name="@x/core")
    _package(tmp_path / "packages" / "app", name="@x/app", dependencies={"@x/core": "*"})
    _package(tmp_path / "packages" / "docs", name="@x/docs")
    (tmp_path / "packages" / "notes").mkdir()  # no package.json: not a workspace
    project = load_project(tmp_path)
    assert [ws.rel for ws in project.workspaces] == [
        "",
        "packages/app",
        "packages/core",
        "packages/docs",
    ]
    assert project.owner("packages/core/src/a.ts").name == "@x/core"
    assert project.owner("scripts/x.js").rel == ""
    affected = project.affected(["packages/core/src/a.ts"])
    assert [ws.name for ws in affected] == ["@x/app", "@x/core"]


def test_pnpm_workspace_globs_are_read_without_yaml(tmp_path: Path) -> None:
    _package(tmp_path, name="root")
    (tmp_path / "pnpm-workspace.yaml").write_text(
        "packages:\n  - 'apps/*'\n  - \"libs/*\"\ncatalog:\n  - nope/*\n", encoding="utf-8"
    )
    _package(tmp_path / "apps" / "web", name="web")
    _package(tmp_path / "libs" / "ui", name="ui")
    _package(tmp_path / "nope" / "z", name="z")
    assert [ws.rel for ws in load_project(tmp_path).workspaces] == ["", "apps/web", "libs/ui"]


def test_the_linter_is_the_one_configured_nearest(tmp_path: Path) -> None:
    _package(tmp_path, name="root", workspaces=["packages/*"])
    _package(tmp_path / "packages" / "a", name="a")
    _package(tmp_path / "packages" / "b", name="b")
    (tmp_path / "biome.json").write_text("{}", encoding="utf-8")
    (tmp_path / "packages" / "b" / "eslint.config.mjs").write_text("", encoding="utf-8")
    project = load_project(tmp_path)
    a, b = project.workspaces[1:]
    assert project.linter(a) == ("biome", tmp_path)
    assert project.linter(b) == ("eslint", tmp_path / "packages" / "b")
    (tmp_path / "biome.json").unlink()
    assert project.linter(a) is None


def test_the_test_runner_from_dependencies_config_or_the_test_script(tmp_path: Path) -> None:
    cases = {
        "v": ({"devDependencies": {"vitest": "3"}}, "vitest"),
        "j": ({"jest": {"testEnvironment": "node"}}, "jest"),
        "n": ({"scripts": {"test": "node --test test/"}}, "node"),
        "none": ({"scripts": {"test": "mocha"}}, None),
    }
    for name, (data, runner) in cases.items():
        _package(tmp_path / name, name=name, **data)
        assert load_project(tmp_path / name).workspaces[0].runner() == runner, name
    (tmp_path / "none" / "vitest.config.ts").write_text("", encoding="utf-8")
    assert load_project(tmp_path / "none").workspaces[0].runner() == "vitest"


def test_binaries_come_from_node_modules_bin_up_to_the_root_never_path(tmp_path: Path) -> None:
    tool = tmp_path / "node_modules" / ".bin" / "tsc"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n", encoding="utf-8")
    nested = tmp_path / "packages" / "a"
    nested.mkdir(parents=True)
    assert find_bin(tmp_path, nested, "tsc") is None  # not executable
    os.chmod(tool, 0o755)
    assert find_bin(tmp_path, nested, "tsc") == tool.resolve()
    assert find_bin(tmp_path, nested, "sh") is None
    assert find_bin(nested, nested, "tsc") is None  # above the project root: not its own


def test_test_files_by_name_or_folder() -> None:
    for rel in ("a.test.ts", "src/a.spec.mjs", "test/helpers.js", "src/__tests__/x.tsx"):
        assert is_test_file(rel), rel
    for rel in ("src/a.ts", "src/testing.ts", "test/data.json"):
        assert not is_test_file(rel), rel


def test_related_tests_follow_relative_imports_however_indirect(tmp_path: Path) -> None:
    files = {
        "src/a.ts": "export const a = 1;\n",
        "src/b.ts": "import { a } from './a.js';\nexport const b = a;\n",
        "src/index.ts": "export * from './b';\n",
        "src/c.ts": "export const c = 2;\n",
        "test/b.test.ts": "import { b } from '../src/index';\n",
        "test/c.test.mjs": "const { c } = await import('../src/c.ts');\n",
        "test/d.test.cjs": "const x = require('../src/missing');\n",
        "node_modules/pkg/a.test.js": "import '../../src/a.ts';\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert related_tests(tmp_path, tmp_path, ["src/a.ts"]) == {
        "test/b.test.ts": "test/b.test.ts imports src/a.ts"
    }
    assert list(related_tests(tmp_path, tmp_path, ["src/c.ts", "test/d.test.cjs"])) == [
        "test/c.test.mjs",
        "test/d.test.cjs",
    ]
    assert related_tests(tmp_path, tmp_path, ["README.md"]) == {}
