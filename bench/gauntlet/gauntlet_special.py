"""Gauntlet scenario: a project full of FIFOs and a socket (issue 23).

Before the fix one FIFO hung `file_write` for good, and about 40 wedged every file write
and shell run (each hung call held one of the worker threads). Here `fifos` FIFOs and a
listening socket sit in the project while file writes and edits aimed at them, writes of
regular files and shell runs all go at once; every call must be answered within its bound
and no special file may be replaced or opened.
"""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path
from typing import Any

import anyio

from agent_habitat.config import ShellConfig
from agent_habitat.errors import HabitatError
from agent_habitat.files import Edit, FileEditArgs, FileWriteArgs
from agent_habitat.habitat import Habitat
from agent_habitat.shell.models import RunArgs
from agent_habitat.workspace import Workspace

__all__ = ["special_files"]

# A bound on each call, not a speed claim: a refusal takes milliseconds, a hang forever.
CALL_BOUND_S = 30.0


async def special_files(project: Path, rng: random.Random, fifos: int) -> dict[str, Any]:
    names = [f"pipe{n}{rng.choice(['', '.py', '.txt'])}" for n in range(fifos)]
    for name in names:
        os.mkfifo(project / name)
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(project / "listening.sock"))
    listening.listen()
    unanswered = refused = wrong = answered = 0
    slowest = 0.0
    try:
        async with Habitat.open(
            Workspace.for_project(project),
            project=project,
            config=ShellConfig(kill_grace_seconds=0.5),
        ) as habitat:

            async def call(kind: str, n: int) -> None:
                nonlocal unanswered, refused, wrong, answered, slowest
                started = time.perf_counter()
                with anyio.move_on_after(CALL_BOUND_S) as scope:
                    try:
                        if kind == "write fifo":
                            await habitat.files.write(FileWriteArgs(path=names[n], content="x"))
                            wrong += 1  # written: a FIFO was opened or replaced
                        elif kind == "edit fifo":
                            edit = Edit(old="a", new="b")
                            await habitat.files.edit(FileEditArgs(path=names[n], edits=[edit]))
                            wrong += 1
                        elif kind == "write socket":
                            await habitat.files.write(
                                FileWriteArgs(path="listening.sock", content="x")
                            )
                            wrong += 1
                        elif kind == "write file":
                            await habitat.files.write(
                                FileWriteArgs(path=f"ok{n}.txt", content="ok\n")
                            )
                            answered += 1
                        else:
                            run = await habitat.shell.run(
                                RunArgs(command=f"echo ok{n}", tab=f"t{n % 4}")
                            )
                            answered += run.exit_code == 0
                    except HabitatError as exc:
                        if "not a regular file" in str(exc):
                            refused += 1
                        elif "busy" in str(exc) or "running" in str(exc):
                            answered += 1  # a busy tab refused at once: an answer
                        else:
                            wrong += 1
                if scope.cancelled_caught:
                    unanswered += 1
                slowest = max(slowest, time.perf_counter() - started)

            kinds = ["write fifo", "edit fifo", "write socket", "write file", "shell run"]
            async with anyio.create_task_group() as tg:
                for n in range(fifos):
                    tg.start_soon(call, kinds[n % len(kinds)], n)
                    tg.start_soon(call, "write fifo", n)
    finally:
        listening.close()
    still_fifos = sum((project / name).is_fifo() for name in names)
    return {
        "special files": fifos + 1,
        "unanswered calls": unanswered,
        "special files written": wrong + (fifos - still_fifos),
        "refused by type": refused,
        "regular calls answered": answered,
        "slowest call s": round(slowest, 3),
    }
