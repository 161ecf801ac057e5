"""The project's interpreter as the ladder sees it: what it has, and how to install what it
lacks where the ladder will use it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_habitat.verify.environments import ProjectEnv, resolve_python


def test_a_missing_tool_is_never_installed_into_the_habitats_own_interpreter(
    tmp_path: Path,
) -> None:
    # No .venv: the ladder falls back to the habitat's interpreter, and pytest installed there
    # would run the project's tests without the project's dependencies.
    python = resolve_python(tmp_path, None)
    assert python == Path(sys.executable)
    env = ProjectEnv(python=python, version="3.11.7", prefix=sys.prefix, modules={"pip": True})
    hint = env.install_hint("pytest")
    assert f"{python} -m pip install" not in hint
    assert hint.startswith("`python3 -m venv .venv && .venv/bin/python -m pip install pytest`")
    assert "[tool.habitat.ladder].python" in hint
    # The .venv the hint makes is the interpreter the next verify uses.
    venv_python = tmp_path / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.touch()
    assert resolve_python(tmp_path, None) == venv_python


def test_the_projects_own_interpreter_is_named_and_one_without_pip_gets_a_way_that_works() -> None:
    python = Path("/p/.venv/bin/python")
    with_pip = ProjectEnv(python=python, prefix="/p/.venv", modules={"pip": True})
    assert with_pip.install_hint("pytest") == f"{python} -m pip install pytest"
    without = ProjectEnv(python=python, prefix="/p/.venv", modules={"pip": False})
    hint = without.install_hint("pytest")
    assert f"uv pip install --python {python} pytest" in hint
    assert f"{python} -m ensurepip" in hint


def test_ruff_is_the_projects_own_else_the_habitats_found_again_once_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ruff import find_ruff_bin  # type: ignore[import-untyped]

    from agent_habitat.verify import environments

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = ProjectEnv(python=bin_dir / "python")
    # A binary remembered from before that is no longer there (an upgrade moved it).
    monkeypatch.setattr(environments, "_HABITAT_RUFF", [str(tmp_path / "gone" / "ruff")])
    assert env.ruff() == [str(find_ruff_bin())]
    assert env.ruff() == [str(find_ruff_bin())]  # remembered
    own = bin_dir / "ruff"
    own.write_text("#!/bin/sh\n")
    assert env.ruff() == [str(own)], "the project's own ruff comes first"
