"""`habitat verify` chooses its path (through the host, or here for `ci_parity`) from the
project's policy; a pyproject.toml that cannot name `ci_parity` is not parsed for it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agent_habitat.cli.verify_fast import policy_of

_FILES = [
    "[project]\nname = 'p'\n",
    "[tool.habitat]\npolicy = 'strict'\n",
    "[tool.habitat]\npolicy = 'ci_parity'\n",
    '[tool.habitat]\npolicy = "ci\\u005fparity"\n',
    '[tool.habitat]\npolicy = """ci_\\\n  parity"""\n',
    "[tool.ruff]\nextend-exclude = ['a\\\\b']\n[tool.habitat]\npolicy = 'standard'\n",
    "[tool.habitat\npolicy = 'ci_parity'\n",  # malformed: the climbing path names it
]


def _parsed(text: str) -> str | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    policy = data.get("tool", {}).get("habitat", {}).get("policy", "standard")
    return policy if isinstance(policy, str) else None


@pytest.mark.parametrize("text", _FILES)
def test_the_path_is_chosen_as_a_full_parse_would_choose_it(
    tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HABITAT_POLICY", raising=False)
    (tmp_path / "pyproject.toml").write_text(text)
    chosen = policy_of(None, str(tmp_path))
    assert (chosen == "ci_parity") == (_parsed(text) == "ci_parity"), text
    assert (chosen is None) == (_parsed(text) is None and "ci_parity" in text), text


def test_a_pyproject_that_cannot_name_ci_parity_is_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n[tool.habitat]\n")
    probe = (
        "import sys\n"
        "from agent_habitat.cli.verify_fast import policy_of\n"
        "print(policy_of(None, sys.argv[1]), "
        "'tomllib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.split() == ["standard", "False"]
