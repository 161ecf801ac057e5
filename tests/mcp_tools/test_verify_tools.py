"""The verify tools and prompts join when a project opens, with list_changed (in memory)."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp.shared.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from agent_habitat.mcp_tools.resources import EPOCH_URI

from .helpers import Inbox, make_project, primary_client, text

pytestmark = pytest.mark.anyio

VERIFY_TOOLS = {"verify_run", "verify_status", "verify_cancel"}


async def test_verify_tools_and_prompts_join_on_project_open_with_list_changed(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    project = make_project(tmp_path / "p")
    inbox = Inbox()
    async with primary_client(None, cwd=plain, message_handler=inbox) as (primary, client):
        before = {t.name for t in (await client.list_tools()).tools}
        prompts_before = [p.name for p in (await client.list_prompts()).prompts]
        assert primary.habitat.verify is None
        await client.call_tool("project_open", {"path": str(project)})
        await inbox.wait_for("notifications/tools/list_changed")
        await inbox.wait_for("notifications/prompts/list_changed")
        after = {t.name for t in (await client.list_tools(cache_mode="bypass")).tools}
        prompts_after = [p.name for p in (await client.list_prompts()).prompts]
        assert primary.habitat.verify is not None
        assert primary.habitat.verify.root == project.resolve()
        status = await client.call_tool("verify_status", {})
    assert not before & VERIFY_TOOLS
    assert VERIFY_TOOLS <= after
    assert prompts_before == ["status"]
    assert prompts_after == ["verify", "cancel", "status", "project_trust"]
    assert text(status).startswith("state=never green=false")


async def test_2026_listeners_hear_the_prompt_list_change_too(tmp_path: Path) -> None:
    second = make_project(tmp_path / "second")
    async with primary_client(make_project(tmp_path / "first"), mode="auto") as (_, client):
        async with client.listen(tools_list_changed=True, prompts_list_changed=True) as events:
            await client.call_tool("project_open", {"path": str(second)})
            with anyio.fail_after(10):
                heard = {await events.__anext__(), await events.__anext__()}
    assert heard == {ToolsListChanged(), PromptsListChanged()}


async def test_a_project_switch_reopens_the_runner_on_the_new_root(tmp_path: Path) -> None:
    first, second = make_project(tmp_path / "first"), make_project(tmp_path / "second")
    async with primary_client(first) as (primary, client):
        old = primary.habitat.verify
        await client.call_tool("project_open", {"path": str(second)})
        new = primary.habitat.verify
        served = primary.habitat.records.servers()
    assert old is not None
    assert new is not None
    assert (old.root, new.root) == (first.resolve(), second.resolve())
    assert [s.root for s in served] == [str(second.resolve())]


async def test_verify_cancel_with_nothing_running_says_so(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool("verify_cancel", {})
    assert not result.is_error
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["cancelled"] is False
    assert text(result).startswith("cancelled=false: nothing to cancel")


async def test_a_bad_rung_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool("verify_run", {"rung": "compile.everything"})
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert "rung" in block.text


async def test_2026_listeners_hear_the_epoch_resource_change_when_a_run_is_queued(
    tmp_path: Path,
) -> None:
    async with primary_client(make_project(tmp_path / "p"), mode="auto") as (_, client):
        async with client.listen(resource_subscriptions=[EPOCH_URI]) as events:
            queued = await client.call_tool("verify_run", {"policy": "minimal"})
            with anyio.fail_after(10):
                heard = await events.__anext__()
            read = await client.read_resource(EPOCH_URI)
    assert heard == ResourceUpdated(uri=EPOCH_URI)
    assert text(queued).startswith("state=queued green=false")
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert '"green":false' in content.text


async def test_a_file_that_does_not_exist_is_named_by_the_mcp_field_not_a_cli_flag(
    tmp_path: Path,
) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool("verify_run", {"files": ["src/nope.py"], "wait": True})
    assert result.is_error
    said = text(result)
    assert said.startswith("verify_run: files: src/nope.py does not exist in the project")
    assert "--" not in said


async def test_a_cancel_says_what_it_cancelled_once(tmp_path: Path) -> None:
    # "cancelled epoch 1 (v…): cancelled on d015…: epoch 1 (v…); compile.project cancelled:
    # cancelled by request" said the epoch twice and "cancelled" four times (munch 4.0.0).
    project = make_project(tmp_path / "p")
    (project / "src" / "extra.py").parent.mkdir(parents=True, exist_ok=True)
    (project / "src" / "extra.py").write_text("X = 1\n", encoding="utf-8")
    async with primary_client(project) as (_, client):
        queued = await client.call_tool("verify_run", {})
        cancel = await client.call_tool("verify_cancel", {})
    assert isinstance(queued.structured_content, dict)
    assert isinstance(cancel.structured_content, dict)
    assert cancel.structured_content["cancelled"] is True
    summary = cancel.structured_content["summary"]
    assert summary.startswith("cancelled ")
    assert summary.count(f"epoch {queued.structured_content['epoch']} (") == 1
    assert "cancelled: cancelled" not in summary
