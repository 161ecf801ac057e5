"""Whose lint rules apply: the project's ruff configuration as ruff finds it, else F + E9."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.verify.rungs.lint import ruff_configured


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("ruff.toml", "line-length = 100\n"),
        (".ruff.toml", "\n"),
        ("pyproject.toml", "[tool.ruff.lint]\nselect = ['E']\n"),
    ],
)
def test_a_ruff_configuration_file_counts_as_configured(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert ruff_configured(tmp_path, ["pkg/mod.py"]) == [tmp_path / name]


def test_a_pyproject_without_tool_ruff_is_not_a_ruff_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mypy]\nstrict = true\n", encoding="utf-8")
    assert ruff_configured(tmp_path, ["mod.py"]) == []


def test_a_pyproject_that_gains_or_loses_tool_ruff_is_read_again(tmp_path: Path) -> None:
    # Its answer is kept by the file's size and mtime (sizes differ here: two writes within
    # one clock tick may share an mtime).
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.mypy]\n", encoding="utf-8")
    assert ruff_configured(tmp_path, ["mod.py"]) == []
    pyproject.write_text("[tool.ruff]\nfix = false\n", encoding="utf-8")
    assert ruff_configured(tmp_path, ["mod.py"]) == [pyproject]
    pyproject.write_text("[tool.mypy]\nstrict = true\n", encoding="utf-8")
    assert ruff_configured(tmp_path, ["mod.py"]) == []


def test_the_closest_configuration_to_a_file_applies(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "ruff.toml").write_text("\n", encoding="utf-8")
    assert ruff_configured(tmp_path, ["sub/a.py"]) == sorted(
        [tmp_path / "pyproject.toml", tmp_path / "sub" / "ruff.toml"]
    )


def test_a_configuration_above_the_project_applies_as_ruff_would_find_it(tmp_path: Path) -> None:
    (tmp_path / "ruff.toml").write_text("\n", encoding="utf-8")
    project = tmp_path / "services" / "api"
    project.mkdir(parents=True)
    assert ruff_configured(project, ["app.py"]) == [tmp_path / "ruff.toml"]
