"""The built wheel, installed in a clean venv, is a working `habitat` (and `agent-habitat`).

This is what `pipx install .`, `uvx agent-habitat mcp` and `pipx run agent-habitat mcp` do:
install the wheel with its dependencies from PyPI into a fresh environment and run the
console script. One venv is built per test session, in the background from its start
(`tests/wheel_venv.py`). The sdist and the wheel are built by the project's own backend
(hatchling, in process) and carry the LICENSE; the sdist holds what the README links to.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from hatchling.builders.sdist import SdistBuilder
from mcp import Client, StdioServerParameters

import wheel_venv
from agent_habitat import __version__

# The first test may wait minutes for the venv (built in the background from the session's
# start, `wheel_venv`); the suite's 180 s hang guard would cut it off.
pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.timeout(900)]


def _pypi_reachable() -> bool:
    if any(os.environ.get(v) for v in ("https_proxy", "HTTPS_PROXY", "PIP_INDEX_URL")):
        return True  # pip goes through the proxy or its own index; let pip decide
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


def _run(*argv: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=wheel_venv.INSTALL_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not _pypi_reachable():
        pytest.skip("pypi.org is unreachable: the wheel's dependencies cannot be installed")
    return wheel_venv.wait(wheel_venv.folder_of(tmp_path_factory.getbasetemp()))


def test_the_installed_scripts_report_the_version(venv: Path, tmp_path: Path) -> None:
    for script in ("habitat", "agent-habitat"):
        out = _run(venv / "bin" / script, "--version", cwd=tmp_path)
        assert out.strip() == f"agent-habitat {__version__}"
    where = _run(
        venv / "bin" / "python", "-c", "import agent_habitat; print(agent_habitat.__file__)"
    )
    assert Path(where.strip()).is_relative_to(venv), "imported the source tree, not the wheel"


async def test_the_installed_server_answers_initialize_over_stdio(
    venv: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    params = StdioServerParameters(
        command=str(venv / "bin" / "agent-habitat"),
        args=["mcp", "--embedded", "--project", str(project)],
        env=dict(os.environ),
        cwd=project,
    )
    async with Client(params, mode="legacy") as client:
        info = client.server_info
        tools = {tool.name for tool in (await client.list_tools()).tools}
    assert info is not None
    assert (info.name, info.version) == ("agent-habitat", __version__)
    assert {"shell_run", "shell_scene", "project_open"} <= tools


def test_the_wheel_carries_the_license_pyproject_declares(tmp_path: Path) -> None:
    names = zipfile.ZipFile(wheel_venv.build_wheel(tmp_path)).namelist()
    assert f"agent_habitat-{__version__}.dist-info/licenses/LICENSE" in names
    assert "MIT License" in (wheel_venv.SOURCE / "LICENSE").read_text(encoding="utf-8")


def test_the_sdist_holds_the_license_and_what_the_readme_links_to(tmp_path: Path) -> None:
    (sdist,) = SdistBuilder(str(wheel_venv.SOURCE)).build(
        directory=str(tmp_path), versions=["standard"]
    )
    prefix = f"agent_habitat-{__version__}/"
    with tarfile.open(sdist) as archive:
        names = {name.removeprefix(prefix) for name in archive.getnames()}
    readme = (wheel_venv.SOURCE / "README.md").read_text(encoding="utf-8")
    linked = {
        target
        for target in re.findall(r"\]\(([^)#\s]+)", readme)
        if "://" not in target and not target.startswith("mailto:")
    }
    assert {"docs/dashboard-tabs.png", "docs/architecture.md"} <= linked  # the scan sees them
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names
    assert sorted(linked - names) == []
