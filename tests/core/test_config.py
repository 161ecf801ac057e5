from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_habitat.config import load_pyproject, load_shell_config
from agent_habitat.errors import ConfigError


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(body, encoding="utf-8")
    return tmp_path


def test_defaults_without_a_pyproject(tmp_path: Path) -> None:
    config = load_shell_config(tmp_path, environ={})
    assert (config.max_tabs, config.history_rows, config.output_cap_bytes) == (8, 50, 16384)


def test_pyproject_then_environment_then_overrides(tmp_path: Path) -> None:
    root = _project(tmp_path, "[tool.habitat.shell]\nmax_tabs = 3\nhistory_rows = 7\n")
    config = load_shell_config(
        root, environ={"HABITAT_HISTORY_ROWS": "9"}, overrides={"preview_bytes": 100}
    )
    assert (config.max_tabs, config.history_rows, config.preview_bytes) == (3, 9, 100)


def test_unknown_key_fails_naming_it(tmp_path: Path) -> None:
    root = _project(tmp_path, "[tool.habitat.shell]\nmax_tab = 3\n")
    with pytest.raises(ConfigError, match=r"\[tool.habitat.shell\].max_tab"):
        load_shell_config(root, environ={})


def test_a_bad_environment_variable_fails_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"HABITAT_MAX_TABS='x'") as caught:
        load_shell_config(tmp_path, environ={"HABITAT_MAX_TABS": "x"})
    assert "[tool.habitat" not in str(caught.value)


def test_a_bad_pyproject_value_fails_naming_the_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.habitat.shell]\nmax_tabs = 'zero'\n")
    with pytest.raises(ConfigError, match=r"\[tool\.habitat\.shell\]\.max_tabs"):
        load_shell_config(tmp_path, environ={})


def test_invalid_toml_fails_naming_the_file(tmp_path: Path) -> None:
    root = _project(tmp_path, "[tool.habitat\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml"):
        load_shell_config(root, environ={})


def test_unknown_top_level_key_fails_naming_it(tmp_path: Path) -> None:
    root = _project(tmp_path, "[tool.habitat]\npolcy = 'strict'\n")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) in \[tool.habitat\]: polcy"):
        load_shell_config(root, environ={})


def test_every_read_sees_the_file_as_it_is_now(tmp_path: Path) -> None:
    # The same size and the same modification time (an edit within the clock's tick): a
    # reader that trusted the file's stat would answer the old table.
    root = _project(tmp_path, "[tool.habitat.shell]\nmax_tabs = 3\n")
    stat = (root / "pyproject.toml").stat()
    assert load_shell_config(root, environ={}).max_tabs == 3
    _project(tmp_path, "[tool.habitat.shell]\nmax_tabs = 4\n")
    os.utime(root / "pyproject.toml", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert load_shell_config(root, environ={}).max_tabs == 4
    _project(tmp_path, "[tool.habitat.shell\nmax_tabs = 4\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml"):
        load_shell_config(root, environ={})
    _project(tmp_path, "[tool.habitat.shell]\nmax_tabs = 4\n")
    assert load_shell_config(root, environ={}).max_tabs == 4


def test_a_caller_changing_its_table_changes_no_later_read(tmp_path: Path) -> None:
    root = _project(tmp_path, "[tool.habitat.shell]\nmax_tabs = 3\n")
    load_pyproject(root)["shell"]["max_tabs"] = 99
    load_pyproject(root).pop("shell")
    assert load_pyproject(root) == {"shell": {"max_tabs": 3}}


@pytest.mark.parametrize("value", ["maybe", "off", "false", "2", " 0"])
def test_a_run_cgroups_switch_that_is_neither_0_nor_1_fails_naming_it(
    tmp_path: Path, value: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_shell_config(tmp_path, environ={"HABITAT_RUN_CGROUPS": value})
    assert f"HABITAT_RUN_CGROUPS={value!r}" in str(caught.value)
    assert "must be 0" in str(caught.value)


@pytest.mark.parametrize("value", ["0", "1", ""])
def test_the_run_cgroups_switch_takes_0_1_or_nothing(tmp_path: Path, value: str) -> None:
    load_shell_config(tmp_path, environ={"HABITAT_RUN_CGROUPS": value})


def test_the_quick_paths_leave_a_bad_run_cgroups_switch_to_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_habitat.cli.scene_fast import configured

    monkeypatch.delenv("HABITAT_RUN_CGROUPS", raising=False)
    assert not configured(tmp_path)
    monkeypatch.setenv("HABITAT_RUN_CGROUPS", "0")
    assert not configured(tmp_path)
    monkeypatch.setenv("HABITAT_RUN_CGROUPS", "maybe")
    assert configured(tmp_path)
