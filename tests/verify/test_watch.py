"""The watcher on a real directory (inotify), and which paths count as a change."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.testing import eventually
from agent_habitat.verify.runner.watch import GitIgnore, ProjectWatcher

pytestmark = pytest.mark.anyio


def test_git_ignored_paths_caches_and_venvs_are_not_changes(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    (root / ".gitignore").write_text("*.log\nbuild/\n", encoding="utf-8")
    ignore = GitIgnore(root)
    given = [
        "src/calc/text.py",
        "run.log",
        "build/x.py",
        ".venv/lib/site.py",
        "src/calc/__pycache__/text.cpython-311.pyc",
        ".git/index",
        ".ruff_cache/x",
        "notes.txt",
    ]
    assert ignore.relevant(given) == ["notes.txt", "src/calc/text.py"]
    (root / ".gitignore").write_text("notes.txt\n", encoding="utf-8")
    assert ignore.relevant([".gitignore", "notes.txt", "run.log"]) == [".gitignore", "run.log"]


def test_a_virtualenv_of_any_name_and_the_habitats_own_files_are_not_changes(
    tmp_path: Path,
) -> None:
    root = build_sample(tmp_path / "calc")
    ignore = GitIgnore(root)
    (root / "env2" / "lib").mkdir(parents=True)
    assert ignore.relevant(["env2/lib/site.py", "CLAUDE.md", ".mcp.json"]) == ["env2/lib/site.py"]
    # The virtualenv is made after its folder was first seen: its marker is news.
    (root / "env2" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    assert ignore.relevant(["env2/pyvenv.cfg", "env2/lib/site.py", "src/calc/text.py"]) == [
        "src/calc/text.py"
    ]


def test_pytests_temporary_cache_folders_are_not_changes(tmp_path: Path) -> None:
    # The folder (reported as it is renamed away) and the files written inside it.
    root = build_sample(tmp_path / "calc")
    given = [
        "pytest-cache-files-k3j2",
        "pytest-cache-files-k3j2/README.md",
        "tests/pytest-cache-files-q/v/cache/nodeids",
        "src/calc/text.py",
    ]
    assert GitIgnore(root).relevant(given) == ["src/calc/text.py"]
    assert GitIgnore(tmp_path).relevant(given) == ["src/calc/text.py"]


def test_outside_git_only_the_noise_is_dropped(tmp_path: Path) -> None:
    assert GitIgnore(tmp_path).relevant(["a.py", ".venv/b.py"]) == ["a.py"]


async def test_a_write_is_reported_and_an_ignored_one_is_not(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    seen: list[list[str]] = []
    async with anyio.create_task_group() as tg:
        await tg.start(ProjectWatcher(root, seen.append).run)
        (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
        (root / "src/calc/__pycache__").mkdir()
        (root / "src/calc/__pycache__/x.pyc").write_bytes(b"x")
        # Written last: once it is reported, so is every event before it (inotify keeps
        # their order), the .pyc's included; no waiting on an event that must not come.
        (root / "sentinel.txt").write_text("after the .pyc\n", encoding="utf-8")
        await eventually(lambda: any("sentinel.txt" in batch for batch in seen), within=30)
        tg.cancel_scope.cancel()
    assert any("src/calc/text.py" in batch for batch in seen), seen
    assert all("pyc" not in path for batch in seen for path in batch), seen
