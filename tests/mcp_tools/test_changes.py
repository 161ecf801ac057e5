"""list_changed, resources/updated, prompts and the open project, in both protocol eras."""

from __future__ import annotations

import warnings
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged
from pydantic import FileUrl

from agent_habitat.mcp_tools.resources import EPOCH_URI, SCENE_URI
from agent_habitat.testing import eventually

from .helpers import Inbox, make_project, open_primary, output, primary_client, text

pytestmark = pytest.mark.anyio


async def test_2025_clients_are_told_list_changed_and_subscribe_are_supported(
    tmp_path: Path,
) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        caps = client.server_capabilities
    assert caps.tools is not None
    assert caps.tools.list_changed is True
    assert caps.prompts is not None
    assert caps.prompts.list_changed is True
    assert caps.resources is not None
    assert caps.resources.subscribe is True


async def test_project_open_switches_the_project_and_sends_tools_list_changed(
    tmp_path: Path,
) -> None:
    first, second = make_project(tmp_path / "first"), make_project(tmp_path / "second")
    inbox = Inbox()
    async with primary_client(first, message_handler=inbox) as (primary, client):
        before = await client.list_tools()
        opened = await client.call_tool("project_open", {"path": str(second)})
        await inbox.wait_for("notifications/tools/list_changed")
        after = await client.list_tools(cache_mode="bypass")
        run = await client.call_tool("shell_run", {"command": "pwd"})
    assert opened.structured_content is not None
    assert opened.structured_content["root"] == str(second)
    assert opened.structured_content["previous"] == str(first)
    assert primary.project.root == second
    describe = {t.name: t.description for t in before.tools}["project_open"]
    assert describe is not None
    assert str(first) in describe
    described = {t.name: t.description for t in after.tools}["project_open"]
    assert described is not None
    assert str(second) in described
    assert output(run) == f"{second}\n"


async def test_project_open_of_a_missing_folder_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool("project_open", {"path": str(tmp_path / "nowhere")})
    assert result.is_error
    assert "nowhere" in text(result)
    assert "not an existing folder" in text(result)


async def test_2026_listeners_hear_tools_list_changed(tmp_path: Path) -> None:
    second = make_project(tmp_path / "second")
    async with primary_client(make_project(tmp_path / "first"), mode="auto") as (_, client):
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("project_open", {"path": str(second)})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
    assert event == ToolsListChanged()


async def test_the_project_comes_from_the_client_roots_when_no_flag_is_given(
    tmp_path: Path,
) -> None:
    cwd_project = make_project(tmp_path / "cwd")
    rooted = make_project(tmp_path / "rooted")

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(rooted.as_uri()), name="r")])

    async with primary_client(None, cwd=cwd_project, list_roots_callback=roots) as (
        primary,
        client,
    ):
        run = await client.call_tool("shell_run", {"command": "pwd"})
        assert primary.project.root == rooted
        assert primary.project.source == "roots"
    assert output(run) == f"{rooted}\n"


async def test_the_project_follows_the_client_roots_when_they_change(tmp_path: Path) -> None:
    first, second = make_project(tmp_path / "first"), make_project(tmp_path / "second")
    current = [first]

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(current[0].as_uri()))])

    inbox = Inbox()
    async with primary_client(
        None, cwd=tmp_path, list_roots_callback=roots, message_handler=inbox
    ) as (primary, client):
        await client.call_tool("shell_scene", {})
        assert primary.project.root == first
        current[0] = second
        with warnings.catch_warnings():  # roots are deprecated in 2026-07-28; 2025 clients send it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.session.send_roots_list_changed()
        await eventually(lambda: primary.project.root == second)
        await inbox.wait_for("notifications/tools/list_changed", count=2)


async def test_the_flag_wins_over_the_client_roots(tmp_path: Path) -> None:
    flagged, rooted = make_project(tmp_path / "flag"), make_project(tmp_path / "rooted")

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(rooted.as_uri()))])

    async with primary_client(flagged, list_roots_callback=roots) as (primary, client):
        await client.call_tool("shell_scene", {})
        assert (primary.project.root, primary.project.source) == (flagged, "flag")


async def test_without_flag_or_roots_the_cwd_git_tree_is_the_project(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repo")
    (project / "sub").mkdir()
    plain = tmp_path / "plain"
    plain.mkdir()
    async with primary_client(None, cwd=project / "sub") as (primary, _):
        assert (primary.project.root, primary.project.source) == (project, "cwd")
    async with primary_client(None, cwd=plain) as (primary, client):
        assert primary.project.root is None
        content = (await client.get_prompt("status")).messages[0].content
        assert isinstance(content, types.TextContent)
        assert "No project is open" in content.text


async def test_scene_resource_is_listed_read_as_json_and_updates_reach_2025_subscribers(
    tmp_path: Path,
) -> None:
    inbox = Inbox()
    async with primary_client(make_project(tmp_path / "p"), message_handler=inbox) as (
        _,
        client,
    ):
        listed = await client.list_resources()
        with warnings.catch_warnings():  # resources/subscribe is the 2025 way; still served
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.session.subscribe_resource(SCENE_URI)
        await client.call_tool("shell_run", {"command": "echo x", "tab": "r"})
        await inbox.wait_for("notifications/resources/updated")
        read = await client.read_resource(SCENE_URI)
    assert [r.uri for r in listed.resources] == [SCENE_URI, EPOCH_URI]
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert '"name":"r"' in content.text
    updates = [
        m.params.uri for m in inbox.messages if isinstance(m, types.ResourceUpdatedNotification)
    ]
    assert set(updates) == {SCENE_URI}


async def test_clients_that_did_not_subscribe_get_no_resource_updates(tmp_path: Path) -> None:
    inbox = Inbox()
    async with primary_client(make_project(tmp_path / "p"), message_handler=inbox) as (
        primary,
        client,
    ):
        await client.call_tool("shell_run", {"command": "echo x"})
        await client.call_tool("shell_scene", {})
        assert primary.broadcaster.legacy_connections == 1
    assert "notifications/resources/updated" not in inbox.methods()


async def test_2026_listeners_hear_scene_updates(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p"), mode="auto") as (_, client):
        async with client.listen(resource_subscriptions=[SCENE_URI]) as subscription:
            await client.call_tool("shell_run", {"command": "echo x"})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
    assert event == ResourceUpdated(uri=SCENE_URI)


async def test_the_status_prompt_says_the_scene_once_and_links_its_resource(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": "echo visible", "tab": "s"})
        prompts = await client.list_prompts()
        status = await client.get_prompt("status")
    assert [p.name for p in prompts.prompts] == ["verify", "cancel", "status", "project_trust"]
    first = status.messages[0].content
    assert isinstance(first, types.TextContent)
    assert "- s: idle; last #1 exited 0" in first.text
    assert first.text.count("visible") == 2, "the command and its last output line, once each"
    linked = status.messages[1].content
    assert isinstance(linked, types.ResourceLink), "a link: the JSON is not copied in"
    assert str(linked.uri) == SCENE_URI


async def test_a_closed_connection_is_forgotten_with_its_subscriptions(tmp_path: Path) -> None:
    async with open_primary(make_project(tmp_path / "p")) as primary:
        async with Client(primary.server, mode="legacy") as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.session.subscribe_resource(SCENE_URI)
            assert primary.broadcaster.legacy_connections == 1
            assert primary.broadcaster.subscribers(SCENE_URI) == 1
        await eventually(lambda: primary.broadcaster.legacy_connections == 0)
        assert primary.broadcaster.subscribers(SCENE_URI) == 0
        await primary.broadcaster.resource_updated(SCENE_URI)  # nobody left: no error
