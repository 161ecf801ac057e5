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

_BAD_RUNNER = "[tool.habitat]\nidle_seconds = -1\n"
# (environment, pyproject.toml, a git work tree, `--project`): the shell's settings, the
# runner's, the file itself; the runner's settings come from the open project's file, which
# without `--project` is the git work tree's, and none in a plain folder.
CASES = {
    "shell": ({"HABITAT_MAX_TABS": "abc"}, None, False, True),
    "runner": ({"HABITAT_IDLE_SECONDS": "-5"}, None, False, True),
    "file": ({}, "[tool.habitat]\nno_such_key = 1\n", False, True),
    "both": ({"HABITAT_HISTORY_ROWS": "0", "HABITAT_COALESCE_SECONDS": "x"}, None, False, True),
    "git tree": ({}, _BAD_RUNNER, True, False),
    "plain folder": ({}, _BAD_RUNNER, False, False),
}

_EARLY = (
    "import sys\nfrom agent_habitat.cli import main\n"
    "code = main(['mcp', '--embedded', *sys.argv[1:]])\n"
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
for name, (env, root, flag) in json.loads(sys.argv[1]).items():
    saved = dict(os.environ)
    os.environ.update(env)
    os.chdir(root)
    async def opened() -> None:
        async with open_primary(Path(root) if flag else None, Path(root)):
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
    for name, (_, pyproject, git, _) in CASES.items():
        root = tmp_path_factory.mktemp(f"project-{name.replace(' ', '-')}")
        if pyproject is not None:
            (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        if git:
            subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
        made[name] = root
    return made


@pytest.fixture(scope="module")
def full_path_says(
    projects: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str | None]:
    """What the habitat's open says for every case, from one interpreter (one SDK import)."""
    home = tmp_path_factory.mktemp("home-full")
    cases = {name: (env, str(projects[name]), flag) for name, (env, _, _, flag) in CASES.items()}
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
    env, _, _, flag = CASES[case]
    root = projects[case]
    done = subprocess.run(
        [sys.executable, "-c", _EARLY, *(["--project", str(root)] if flag else [])],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=root,
        env=_env(tmp_path / "home", env),
    )
    expected = full_path_says[case]
    if expected is None:  # the open takes it: so does the check, and the server serves
        assert "bad configuration" not in done.stderr
        assert done.stderr.strip().splitlines()[-1] == "SDK loaded: True"
        return
    assert done.returncode == 2, done.stderr
    message, loaded = done.stderr.strip().splitlines()
    assert message == expected
    assert loaded == "SDK loaded: False"
