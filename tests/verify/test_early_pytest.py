"""Which warm pytest a one-shot verify begins before it imports the ladder
(verify/early_pytest.py): only the one its climb will want, read as the climb reads it, and
none where it cannot tell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_habitat.verify.early_pytest import TESTING_POLICIES, _python
from agent_habitat.verify.models import POLICIES


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HABITAT_POLICY", "HABITAT_LADDER_PYTHON", "HABITAT_LADDER_WARM_PYTEST"):
        monkeypatch.delenv(name, raising=False)


def _project(root: Path, pyproject: str | None) -> Path:
    root.mkdir()
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return root


def test_the_testing_policies_are_the_tables_policies_with_a_test_rung_but_ci_parity() -> None:
    testing = {
        name
        for name, rungs in POLICIES.items()
        if {"test.scoped", "test.full"} & set(rungs) and name != "ci_parity"
    }
    assert set(TESTING_POLICIES) == testing


def test_a_project_with_no_habitat_settings_gets_the_interpreter_the_climb_resolves(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p", '[project]\nname = "p"\n')
    assert _python(root, None, None) == Path(sys.executable)
    venv = root / ".venv/bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    assert _python(root, None, None) == venv / "python"


def test_the_configured_interpreter_is_the_one_begun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "p", f"[tool.habitat.ladder]\npython = {sys.executable!r}\n")
    assert _python(root, None, None) == Path(sys.executable)
    other = tmp_path / "other-python"
    other.symlink_to(sys.executable)
    monkeypatch.setenv("HABITAT_LADDER_PYTHON", str(other))
    assert _python(root, None, None) == other


@pytest.mark.parametrize(
    ("pyproject", "policy", "rungs", "env"),
    [
        (None, "minimal", None, {}),
        (None, "ci_parity", None, {}),
        (None, None, None, {"HABITAT_POLICY": "minimal"}),
        ('[tool.habitat]\npolicy = "minimal"\n', None, None, {}),
        ('[tool.habitat]\npolicy = "ci_parity"\n', None, None, {}),
        (None, None, ["diagnose.files", "compile.project"], {}),
        ("[tool.habitat.ladder]\nwarm_pytest = false\n", None, None, {}),
        (None, None, None, {"HABITAT_LADDER_WARM_PYTEST": "false"}),
        ('[tool.habitat.ladder]\npython = "/no/such/python"\n', None, None, {}),
        ("[tool.habitat.ladder]\npython = 3\n", None, None, {}),
        ("[tool.habitat\nbroken", None, None, {}),
    ],
)
def test_nothing_is_begun_where_the_climb_runs_no_warm_pytest_or_this_cannot_tell(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pyproject: str | None,
    policy: str | None,
    rungs: list[str] | None,
    env: dict[str, str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    root = _project(tmp_path / "p", pyproject)
    assert _python(root, policy, rungs) is None


def test_a_policy_given_on_the_command_line_wins_over_the_projects(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", '[tool.habitat]\npolicy = "minimal"\n')
    assert _python(root, "standard", None) == Path(sys.executable)
    assert _python(root, None, ["test.scoped"]) is None  # the project's policy: minimal
    assert _python(root, "strict", ["test.full"]) == Path(sys.executable)
