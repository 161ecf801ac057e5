"""The project interpreter's probe, kept in the workspace's state across processes: trusted
while the interpreter, its environment and its path's folders are unchanged, asked again
once a package is installed. A real venv; the one seam watched is the command runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_habitat.verify import environments
from agent_habitat.verify.environments import ProjectEnv, probe_env


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    folder = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder


def _probe(python: Path, kept: Path, spool: Path) -> ProjectEnv:
    environments._CACHE.clear()  # a new process: only the kept file remains
    return anyio.run(probe_env, python, spool / "probe.out", kept)


def test_a_kept_probe_serves_the_next_process_until_a_package_is_installed(
    venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    real = environments.run_command  # type: ignore[attr-defined]

    async def counted(argv: list[str], **kwargs: Any) -> Any:
        ran.append(argv)
        return await real(argv, **kwargs)

    monkeypatch.setattr(environments, "run_command", counted)
    python, kept = venv / "bin" / "python", tmp_path / "state" / "probe.json"
    first = _probe(python, kept, tmp_path)
    assert first.has("pytest") is False
    assert len(ran) == 1
    assert kept.is_file()
    assert _probe(python, kept, tmp_path) == first
    assert len(ran) == 1  # kept: no interpreter started
    # pytest "installed": its folder appears in site-packages, whose mtime moves.
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "pytest").mkdir()
    (site / "pytest" / "__init__.py").write_text("", encoding="utf-8")
    again = _probe(python, kept, tmp_path)
    assert len(ran) == 2
    assert again.has("pytest") is True
    # Another PYTHONPATH is another interpreter start: asked again.
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    _probe(python, kept, tmp_path)
    assert len(ran) == 3


def test_a_package_installed_while_the_host_runs_is_seen_by_its_next_verify(
    venv: Path, tmp_path: Path
) -> None:
    # The host keeps the probe in memory across climbs. The venv's python is a symlink to
    # the base interpreter, whose mtime no install moves: a `pip install pytest` the rung's
    # own hint asked for was not seen until the host restarted (colorama 0.4.6: incomplete
    # "pytest not installed" after the install, every verify).
    environments._CACHE.clear()
    python, spool = venv / "bin" / "python", tmp_path / "probe.out"
    assert anyio.run(probe_env, python, spool).has("pytest") is False
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "pytest").mkdir()
    (site / "pytest" / "__init__.py").write_text("", encoding="utf-8")
    assert anyio.run(probe_env, python, spool).has("pytest") is True
