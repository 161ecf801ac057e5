from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.environments import ProjectEnv
from agent_habitat.verify.rungs.checkers import detect_type_checker, mypy_configured, version_flags


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("pyproject.toml", "[tool.basedpyright]\n", "basedpyright"),
        ("pyproject.toml", "[tool.pyright]\n", "pyright"),
        ("pyrightconfig.json", "{}", "pyright"),
        ("pyproject.toml", "[tool.ty]\n", "ty"),
        ("ty.toml", "[rules]\n", "ty"),
        ("pyproject.toml", "[tool.pyrefly]\n", "pyrefly"),
        ("pyrefly.toml", "project-includes = ['.']\n", "pyrefly"),
        ("pyproject.toml", "[tool.mypy]\n[tool.ty]\n", "ty"),
        ("pyproject.toml", "[tool.mypy]\nstrict = true\n", "mypy"),
        ("setup.cfg", "[mypy]\nstrict = True\n", "mypy"),
        ("mypy.ini", "[mypy]\n", "mypy"),
        ("pyproject.toml", "[project]\nname = 'x'\n", "mypy"),
    ],
)
def test_the_type_checker_is_the_one_the_project_configures(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert detect_type_checker(tmp_path, LadderConfig()) == expected


def test_compileall_is_left_only_where_no_type_checker_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = ProjectEnv(python=tmp_path / "py", version="3.12.0", prefix=str(tmp_path), modules={})
    assert detect_type_checker(tmp_path, LadderConfig(), env) == "mypy"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert detect_type_checker(tmp_path, LadderConfig(), env) == "compileall"
    with_own = ProjectEnv(python=tmp_path / "py", version="3.12.0", modules={"mypy": True})
    assert detect_type_checker(tmp_path, LadderConfig(), with_own) == "mypy"


def test_mypy_counts_as_configured_only_when_the_project_configures_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n", encoding="utf-8")
    assert not mypy_configured(tmp_path)
    (tmp_path / "setup.cfg").write_text("[mypy]\n", encoding="utf-8")
    assert mypy_configured(tmp_path)


def test_a_configured_type_checker_wins(tmp_path: Path) -> None:
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    assert detect_type_checker(tmp_path, LadderConfig(type_checker="pyright")) == "pyright"


def test_the_habitats_mypy_is_told_the_projects_python_version_unless_pinned(
    tmp_path: Path,
) -> None:
    other = ProjectEnv(python=tmp_path / "py", version="3.13.1", prefix=str(tmp_path), modules={})
    assert version_flags(tmp_path, other) == ["--python-version", "3.13"]
    (tmp_path / "setup.cfg").write_text("[mypy]\npython_version = 3.12\n", encoding="utf-8")
    assert version_flags(tmp_path, other) == []
    own_mypy = ProjectEnv(
        python=tmp_path / "py", version="3.13.1", prefix=str(tmp_path), modules={"mypy": True}
    )
    assert version_flags(tmp_path / "elsewhere", own_mypy) == []
    habitat = ProjectEnv(python=Path(sys.executable), version="3.13.1", prefix=sys.prefix)
    assert version_flags(tmp_path / "elsewhere", habitat) == []


def test_the_habitats_mypy_runs_beside_a_project_named_like_one_of_its_dependencies(
    tmp_path: Path,
) -> None:
    # pathspec's own source tree: mypy imports pathspec, and the project's (an older or a
    # stripped one) must not stand in for the one mypy was installed with.
    (tmp_path / "pathspec").mkdir()
    (tmp_path / "pathspec" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "mod.py").write_text("x: int = 'no'\n", encoding="utf-8")
    env = ProjectEnv(python=Path(sys.executable), version="3.12.0", prefix=sys.prefix, modules={})
    prefix, extra = env.mypy()
    done = subprocess.run(
        [*prefix, *extra, "--no-incremental", "mod.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "mod.py:1: error: Incompatible types in assignment" in done.stdout
