"""A foreground run followed from the CLI (`cli.attach.follow_run`): the follower's own calls
to the host (`last` until the run is found) go over the host's UNIX socket beside the run's
call, and are stopped when that call ends. Stopped in the loop turn a call's answer arrives,
anyio's UNIX socket stream has the event loop print "Exception in callback
Future.set_result(None) ... InvalidStateError" on stderr: a loaded fresh-clone run of
test_cli_host_path_e2e printed it above the tab cap's refusal."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream
from anyio.lowlevel import checkpoint
from pydantic import BaseModel

from agent_habitat.cli import attach
from agent_habitat.cli.attach import follow_run
from agent_habitat.errors import HabitatError, NotFoundError
from agent_habitat.shell import models as m
from agent_habitat.verbs import SHELL_VERBS, AnyVerb

pytestmark = pytest.mark.anyio

_RUN = next(row for row in SHELL_VERBS if row.name == "run")


@pytest.fixture
async def socket_path() -> AsyncIterator[Path]:
    with tempfile.TemporaryDirectory() as folder:  # short: a socket path has 107 bytes
        yield Path(folder, "host.sock")


async def test_a_refusal_ending_the_follow_as_a_last_is_answered_prints_no_loop_error(
    socket_path: Path,
) -> None:
    errors: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    listener = await anyio.create_unix_listener(socket_path)
    answers: list[SocketStream] = []  # the host's ends of the `last` calls, unanswered
    side_waits = anyio.Event()
    lasts = 0

    async def call(verb: AnyVerb, request: BaseModel) -> BaseModel:
        nonlocal lasts
        if verb.name == "last":
            lasts += 1
            async with await anyio.connect_unix(socket_path) as ours:
                answers.append(await listener.accept())
                await ours.send(b"last")
                if lasts == 1:  # the one before the follow: no run in the tab yet
                    await answers[-1].send(b"none")
                else:
                    side_waits.set()
                await ours.receive()
            raise NotFoundError("no run in tab 'z' yet")
        # The run's call: refused (the tab cap) as the host answers the follower's `last`.
        await side_waits.wait()
        await anyio.wait_all_tasks_blocked()  # the follower waits on its socket
        await answers[-1].send(b"none")  # readable at the loop's next look
        await checkpoint()  # this task goes on before that look's answers are handled
        raise HabitatError("tab limit reached (2 open: x, w)")

    try:
        with anyio.fail_after(30), pytest.raises(HabitatError, match="tab limit"):
            await follow_run(
                call,
                _RUN,
                m.RunArgs(command="true", tab="z"),
                tab="z",
                streamer=None,
                interactive=False,
            )
        await checkpoint()  # a callback the stop left queued runs now
    finally:
        loop.set_exception_handler(handler)
        for answer in answers:
            await answer.aclose()
        await listener.aclose()
    assert lasts == 2
    assert [e["message"] for e in errors] == []


async def test_a_last_the_host_never_answers_is_given_up_after_the_grace(
    socket_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(attach, "STOP_GRACE_SECONDS", 0.1)
    listener = await anyio.create_unix_listener(socket_path)
    answers: list[SocketStream] = []
    side_waits = anyio.Event()

    async def call(verb: AnyVerb, request: BaseModel) -> BaseModel:
        if verb.name == "last":
            async with await anyio.connect_unix(socket_path) as ours:
                answers.append(await listener.accept())
                if len(answers) > 1:  # the follower's: a host that stopped answering
                    side_waits.set()
                    await ours.receive()
            raise NotFoundError("no run in tab 'z' yet")
        await side_waits.wait()
        raise HabitatError("tab limit reached (2 open: x, w)")

    try:
        with anyio.fail_after(30), pytest.raises(HabitatError, match="tab limit"):
            await follow_run(
                call,
                _RUN,
                m.RunArgs(command="true", tab="z"),
                tab="z",
                streamer=None,
                interactive=False,
            )
    finally:
        for answer in answers:
            await answer.aclose()
        await listener.aclose()
