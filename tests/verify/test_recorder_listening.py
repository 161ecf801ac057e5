"""The background recording hears verify requests from before the warm-up (issue 22): a
climb no longer waits for the warm-up, so a request can be running when the recording
would start, and the recording must wait for it, never run beside it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.testing import eventually
from agent_habitat.verify.runner.config import SubstrateConfig
from agent_habitat.verify.runner.recorder import BackgroundRecorder
from agent_habitat.verify.runner.substrate import SubstrateFactory
from agent_habitat.verify.select.memo import SelectionMemo
from git_tree import git, write
from ladder_runs import tree_ctx

pytestmark = pytest.mark.anyio


async def test_a_request_asked_before_the_recording_starts_holds_it_back(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    write(root, "notes.txt", "x\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "p")
    bus = InMemoryEventBus("t")
    substrates = SubstrateFactory(tmp_path / "subs", SubstrateConfig())
    recorder = BackgroundRecorder(bus=bus, memo=SelectionMemo(), substrates=substrates)
    with recorder.listening():  # the slot listens from before the warm-up
        # A verify asked while the warm-up still ran: its climb did not wait for it.
        bus.publish("environment.task.queued", task="v1")
        async with anyio.create_task_group() as tg:
            tg.start_soon(recorder.run, tree_ctx(root, "warm-1"))
            await eventually(lambda: recorder.state == "waiting")
            assert recorder.runs == 0
            tg.cancel_scope.cancel()
