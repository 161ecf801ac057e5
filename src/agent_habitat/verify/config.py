"""`[tool.habitat.ladder]` (rung commands, tools, limits) and `[tool.habitat] policy`.

A rung command is a shell line (run by `/bin/sh -c`) or an argv list. Placeholders:
`{files}` the touched files, `{modules}` the affected modules, `{tests}` the selected tests
(empty when the whole suite is selected). In a line they expand shell-quoted; in a list an
element that is exactly a placeholder expands to one element per item.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..config import load_pyproject, load_section
from ..errors import ConfigError
from .models import POLICIES, Policy, RungName

__all__ = ["Command", "LadderConfig", "expand_command", "load_ladder_config", "load_policy"]

Command = str | list[str]

TypeChecker = Literal["auto", "mypy", "pyright", "basedpyright", "ty", "pyrefly", "compileall"]
Lint = Literal["new", "strict"]

_RUNG_KEYS: dict[RungName, str] = {
    "diagnose.files": "diagnose_files",
    "compile.project": "compile_project",
    "build.affected": "build_affected",
    "test.scoped": "test_scoped",
    "test.full": "test_full",
}


class LadderConfig(BaseModel):
    """`[tool.habitat.ladder]`; rung keys may be written `test_scoped` or `"test.scoped"`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    diagnose_files: Command | None = Field(default=None, alias="diagnose.files")
    compile_project: Command | None = Field(default=None, alias="compile.project")
    build_affected: Command | None = Field(default=None, alias="build.affected")
    test_scoped: Command | None = Field(default=None, alias="test.scoped")
    test_full: Command | None = Field(default=None, alias="test.full")
    install: Command | None = None
    """Reinstall command after a manifest change; default `python -m pip install -e .`."""
    ci_test: Command | None = None
    """The project's CI test command; `test.full` runs it under the `ci_parity` policy."""
    python: str | None = None
    """The project's interpreter; default `.venv/bin/python`, else the current one."""
    type_checker: TypeChecker = "auto"
    """`auto`: pyright/basedpyright/ty/pyrefly/mypy when the project configures one, else
    mypy with its defaults (non-strict); compileall only where no type checker can run."""
    lint: Lint = "new"
    """`new`: only findings that are not at HEAD too make a rung red, and a project without
    its own ruff configuration gets the bug-finding rules only (`F`, `E9`). `strict`: every
    finding counts, with ruff's full configured (or default) rule set."""
    fetch_checkers: bool = True
    """A project that configures pyright or basedpyright and has neither: fetch basedpyright
    once into the habitat's tools folder (`$HABITAT_HOME/tools`, not the project's
    environment). False: `compile.project` is skipped, saying what to install."""
    dmypy: bool = True
    """Type-check through a warm `dmypy` daemon (False: a plain `mypy` run each time)."""
    warm_checker: bool = True
    """Type-check pyright, basedpyright and ty through their warm language server where a
    server keeps one (verify/rungs/warm_checker.py). False: the tool's CLI, cold, each time."""
    warm_pytest: bool = True
    """Run the test rungs through a warm pytest (one that has imported pytest and its own
    plugins, forked per run; verify/rungs/warm_pytest.py) where a server keeps one. False:
    a fresh `python -m pytest` each time."""
    warmup: bool = True
    """Warm the ladder when a server (host, MCP) opens the project: import graph, test
    dependencies, lint baseline, type-check daemon (verify/runner/warmup.py)."""
    packages: list[str] | None = None
    """Import names of the project's packages; default: found under `src/` or the root."""
    test_paths: list[str] | None = None
    """Where tests live; default pytest's `testpaths`, else the whole project."""
    selection_ignore: list[str] = Field(
        default_factory=lambda: ["*.md", "*.rst", "docs/*", "LICENSE*", ".gitignore"]
    )
    """Changed files matching these globs do not widen the test selection."""
    timeout_s: float = Field(default=900.0, gt=0)
    """A rung's process is killed after this long (state `error`)."""
    output_cap_bytes: int = Field(default=16 * 1024, ge=256)

    def command_for(self, rung: RungName) -> Command | None:
        value: Command | None = getattr(self, _RUNG_KEYS[rung])
        return value


class _PolicyTable(BaseModel):
    # Only `policy` is ours at this level; sibling tables belong to other parts.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    policy: Policy = "standard"


def load_ladder_config(
    root: Path | None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> LadderConfig:
    section = load_pyproject(root).get("ladder", {})
    if not isinstance(section, dict):
        raise ConfigError("[tool.habitat.ladder] must be a table")
    return load_section(
        LadderConfig,
        section,
        where="[tool.habitat.ladder]",
        env_prefix="HABITAT_LADDER_",
        environ=environ,
        overrides=overrides,
    )


def load_policy(root: Path | None, environ: Mapping[str, str] | None = None) -> Policy:
    """`HABITAT_POLICY`, else `[tool.habitat] policy`, else `standard`."""
    table = {k: v for k, v in load_pyproject(root).items() if k == "policy"}
    env = os.environ if environ is None else environ
    if env.get("HABITAT_POLICY") and env["HABITAT_POLICY"] not in POLICIES:
        raise ConfigError(
            f"HABITAT_POLICY={env['HABITAT_POLICY']!r} is not a policy; use one of {list(POLICIES)}"
        )
    return load_section(
        _PolicyTable, table, where="[tool.habitat]", env_prefix="HABITAT_", environ=environ
    ).policy


def _join(items: Sequence[str]) -> str:
    return " ".join(shlex.quote(i) for i in items)


def expand_command(
    command: Command,
    *,
    files: Sequence[str] = (),
    modules: Sequence[str] = (),
    tests: Sequence[str] = (),
) -> list[str]:
    """The argv of a configured command with its placeholders filled in."""
    values = {"files": list(files), "modules": list(modules), "tests": list(tests)}
    if isinstance(command, str):
        line = command
        for name, items in values.items():
            line = line.replace("{" + name + "}", _join(items))
        return ["/bin/sh", "-c", line]
    argv: list[str] = []
    for part in command:
        whole = part.strip("{}") if part.startswith("{") and part.endswith("}") else None
        if whole in values:
            argv.extend(values[whole])
            continue
        for name, items in values.items():
            part = part.replace("{" + name + "}", " ".join(items))
        argv.append(part)
    return argv
