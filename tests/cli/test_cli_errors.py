"""With `--json`, errors are JSON on stderr with the same exit codes as the text form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_habitat.cli import main


def _call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, json.loads(err)


def test_a_bad_value_names_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = ["--project", str(tmp_path), "--json"]
    code, error = _call(capsys, "run", "ls", "--tab", "bad name", *project)
    assert code == 2
    assert error["field"] == "tab"
    assert "--tab" in str(error["error"])
    code, error = _call(capsys, "run", "ls", "--env", "NOEQUALS", *project)
    assert (code, error["field"]) == (2, "env")
    assert "KEY=VALUE" in str(error["error"])
    code, error = _call(capsys, "kill", "a", "--tab", "b", *project)
    assert (code, error["field"]) == (2, "tab")
    assert "given twice" in str(error["error"])


def test_a_refusal_exits_1_and_has_no_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, error = _call(capsys, "last", "nobody", "--project", str(tmp_path), "--json")
    assert code == 1
    assert error["field"] is None
    assert "no tab 'nobody'" in str(error["error"])


def test_a_missing_tab_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, error = _call(capsys, "close", "--project", str(tmp_path), "--json")
    assert (code, error["field"]) == (2, "tab")


def test_a_bad_command_line_is_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scene", "--json", "--no-such-flag"])
    assert exited.value.code == 2
    error = json.loads(capsys.readouterr().err)
    assert "--no-such-flag" in error["error"]
    assert error["field"] is None


def test_without_json_errors_stay_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["last", "nobody", "--project", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("habitat: no tab 'nobody'")


def test_init_and_rules_refuse_a_file_they_cannot_merge_in_json_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".mcp.json").write_text("{not json", encoding="utf-8")
    code, error = _call(capsys, "init", "--client", "claude", "--project", str(tmp_path), "--json")
    assert (code, error["field"]) == (1, None)
    assert ".mcp.json is not valid JSON" in str(error["error"])
    (tmp_path / "CLAUDE.md").mkdir()
    code, error = _call(
        capsys, "rules", "--for", "claude", "--write", "--project", str(tmp_path), "--json"
    )
    assert code == 1
    assert str(error["error"]).startswith("cannot write CLAUDE.md: ")
