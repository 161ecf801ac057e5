from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.errors import ConfigError
from agent_habitat.verify.config import expand_command, load_ladder_config, load_policy


def _pyproject(root: Path, body: str) -> Path:
    (root / "pyproject.toml").write_text(body, encoding="utf-8")
    return root


def test_rung_commands_are_read_under_dotted_or_underscore_names(tmp_path: Path) -> None:
    root = _pyproject(
        tmp_path,
        '[tool.habitat.ladder]\n"test.scoped" = "cargo test {tests}"\n'
        'compile_project = ["cargo", "build"]\n',
    )
    config = load_ladder_config(root, environ={})
    assert config.command_for("test.scoped") == "cargo test {tests}"
    assert config.command_for("compile.project") == ["cargo", "build"]
    assert config.command_for("diagnose.files") is None


def test_an_unknown_ladder_key_fails_naming_the_key(tmp_path: Path) -> None:
    root = _pyproject(tmp_path, '[tool.habitat.ladder]\n"test.scopd" = "x"\n')
    with pytest.raises(ConfigError, match=r"\[tool\.habitat\.ladder\]\.test\.scopd"):
        load_ladder_config(root, environ={})


def test_a_bad_value_fails_naming_the_key(tmp_path: Path) -> None:
    root = _pyproject(tmp_path, "[tool.habitat.ladder]\ntimeout_s = -1\n")
    with pytest.raises(ConfigError, match="timeout_s"):
        load_ladder_config(root, environ={})


def test_the_policy_comes_from_the_habitat_table_and_the_environment_wins(tmp_path: Path) -> None:
    root = _pyproject(tmp_path, '[tool.habitat]\npolicy = "strict"\n[tool.habitat.shell]\n')
    assert load_policy(root, environ={}) == "strict"
    assert load_policy(root, environ={"HABITAT_POLICY": "minimal"}) == "minimal"
    assert load_policy(tmp_path / "nowhere", environ={}) == "standard"


def test_an_unknown_policy_fails_naming_the_key(tmp_path: Path) -> None:
    root = _pyproject(tmp_path, '[tool.habitat]\npolicy = "paranoid"\n')
    with pytest.raises(ConfigError, match=r"\[tool\.habitat\]\.policy"):
        load_policy(root, environ={})
    with pytest.raises(ConfigError, match="HABITAT_POLICY"):
        load_policy(tmp_path / "nowhere", environ={"HABITAT_POLICY": "paranoid"})


def test_a_command_line_gets_its_placeholders_shell_quoted() -> None:
    argv = expand_command("lint {files} && test {tests}", files=["a b.sh", "c.sh"], tests=[])
    assert argv == ["/bin/sh", "-c", "lint 'a b.sh' c.sh && test "]


def test_a_whole_placeholder_in_an_argv_becomes_one_argument_per_item() -> None:
    argv = expand_command(
        ["mypy", "{modules}", "--x={files}"], modules=["p.a", "p.b"], files=["f1", "f2"]
    )
    assert argv == ["mypy", "p.a", "p.b", "--x=f1 f2"]
