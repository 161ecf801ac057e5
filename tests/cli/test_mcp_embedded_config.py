"""`habitat mcp --embedded` with bad configuration says so before it imports the MCP SDK (a
second of CPU, several on a loaded machine), with the message and exit status the habitat's
own open gives (`serve_stdio`: `habitat mcp: <error>`, status 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# (environment, pyproject.toml): the shell's settings, the runner's, the file itself.
CASES = {
    "shell": ({"HABITAT_MAX_TABS": "abc"}, None),
    "runner": ({"HABITAT_IDLE_SECONDS": "-5"}, None),
    "file": ({}, "[tool.habitat]\nno_such_key = 1\n"),
    "both": ({"HABITAT_HISTORY_ROWS": "0", "HABITAT_COALESCE_SECONDS": "x"}, None),
}

_EARLY = (
    "import sys\nfrom agent_habitat.cli import main\n"
    "code = main(['mcp', '--embedded', '--project', sys.argv[1]])\n"
    "print('SDK loaded:', 'mcp' in sys.modules, file=sys.stderr)\n"
    "sys.exit(code)"
)
# The habitat's own open, as `serve_stdio` reports it: what the early check must match.
_FULL = """
import json, os, sys
from pathlib import Path
import anyio
from agent_habitat.cli.mcp_cmds import open_primary
from agent_habitat.errors import HabitatError

said = {}
for name, (env, root) in json.loads(sys.argv[1]).items():
    saved = dict(os.environ)
    os.environ.update(env)
    async def opened() -> None:
        async with open_primary(None, Path(root)):
            pass
    try:
        anyio.run(opened)
        said[name] = None
    except HabitatError as exc:
        said[name] = f"habitat mcp: {exc}"
    os.environ.clear()
    os.environ.update(saved)
print(json.dumps(said))
"""


def _env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HABITAT_") and not k.startswith("COVERAGE_")
    }
    return {**env, "HABITAT_HOME": str(home), **extra}


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for name, (_, pyproject) in CASES.items():
        root = tmp_path_factory.mktemp(f"project-{name}")
        if pyproject is not None:
            (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        made[name] = root
    return made


@pytest.fixture(scope="module")
def full_path_says(
    projects: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str | None]:
    """What the habitat's open says for every case, from one interpreter (one SDK import)."""
    home = tmp_path_factory.mktemp("home-full")
    cases = {name: (env, str(projects[name])) for name, (env, _) in CASES.items()}
    done = subprocess.run(
        [sys.executable, "-c", _FULL, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=_env(home, {}),
    )
    said: dict[str, str | None] = json.loads(done.stdout)
    return said


@pytest.mark.parametrize("case", list(CASES))
def test_bad_configuration_is_reported_before_the_sdk_loads(
    case: str,
    projects: dict[str, Path],
    full_path_says: dict[str, str | None],
    tmp_path: Path,
) -> None:
    env, _ = CASES[case]
    done = subprocess.run(
        [sys.executable, "-c", _EARLY, str(projects[case])],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=_env(tmp_path / "home", env),
    )
    expected = full_path_says[case]
    assert expected is not None, "the habitat's own open took this configuration"
    assert done.returncode == 2, done.stderr
    message, loaded = done.stderr.strip().splitlines()
    assert message == expected
    assert loaded == "SDK loaded: False"
