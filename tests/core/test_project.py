"""The open project is core: `project_open` publishes `project.opened` with no MCP around."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.errors import UsageError
from agent_habitat.habitat import Habitat
from agent_habitat.testing import EventRecorder
from agent_habitat.verbs import verb
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    (second / ".git").mkdir(parents=True)
    return first, second


async def test_project_open_publishes_project_opened_and_the_shell_follows(
    tmp_path: Path,
) -> None:
    first, second = _folders(tmp_path)
    async with Habitat.open(Workspace.for_project(first), project=first) as habitat:
        recorder = EventRecorder(habitat.bus)
        row = verb("open", "project")
        args = row.args.model_validate({"path": str(second)})
        result = await row.call(habitat, args, None)
        event = await recorder.wait_for("project.opened")
        journaled = [e.kind for e in habitat.journal.since(0)]
        assert habitat.shell.default_cwd() == str(second)
    assert result.model_dump() == {
        "root": str(second),
        "previous": str(first),
        "git_root": str(second),
        "source": "project_open",
    }
    assert event.data == {"root": str(second), "source": "project_open"}
    assert journaled == ["project.opened"]


async def test_listeners_run_before_the_event_and_only_while_subscribed(tmp_path: Path) -> None:
    first, second = _folders(tmp_path)
    async with Habitat.open(Workspace.for_project(first), project=first) as habitat:
        recorder = EventRecorder(habitat.bus)
        heard: list[tuple[Path, list[str]]] = []

        async def listener(root: Path) -> None:
            heard.append((root, recorder.kinds()))

        unsubscribe = habitat.project.on_change(listener)
        await habitat.project.open(second, "roots")
        unsubscribe()
        await habitat.project.open(first)
    assert heard == [(second, [])]
    assert recorder.kinds() == ["project.opened", "project.opened"]


async def test_opening_the_open_project_again_changes_nothing(tmp_path: Path) -> None:
    first, _ = _folders(tmp_path)
    async with Habitat.open(Workspace.for_project(first), project=first) as habitat:
        recorder = EventRecorder(habitat.bus)
        result = await habitat.project.open(first)
        assert recorder.kinds() == []
    assert (result.root, result.previous) == (str(first), str(first))


async def test_a_missing_folder_is_refused_naming_it_and_nothing_changes(tmp_path: Path) -> None:
    first, _ = _folders(tmp_path)
    async with Habitat.open(Workspace.for_project(first), project=first) as habitat:
        with pytest.raises(UsageError, match=r"nowhere.*not an existing folder"):
            await habitat.project.open(tmp_path / "nowhere")
        assert (habitat.project.root, habitat.project.source) == (first, "flag")
        assert habitat.project.describe() == f"Open project: {first} (from flag)."
