"""A Node climb at `compile.project` ends at a red `test.scoped` (started beside the lint)
only while the type check's work waits on a warm checker's start (verify/ahead.py
`_WHILE_WAITING`, `RungContext.long_waits`): the start's first answer is a check of the whole
program, which a red of the tests cannot turn green. At any other time the type check's own
answer is the verdict's, as before. The Node toolchain's rung table with scripted rungs, one
seam: which rung ends first is decided by events, not by timing."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.verify import LadderRequest, LadderResult, RungName, run_ladder
from agent_habitat.verify.models import Diagnostic, RungResult
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.base import Rung
from agent_habitat.verify.toolchains.node import rungs as node_rungs
from git_tree import commit_tree, write

pytestmark = pytest.mark.anyio

_ADD = "export function add(a, b) {\n  return a + b;\n}\n"


class _Script:
    def __init__(self) -> None:
        self.cancelled: list[RungName] = []
        self.tests_red = anyio.Event()
        self.waiting = anyio.Event()

    def green(self, rung: RungName) -> Rung:
        async def run(ctx: RungContext) -> RungResult:
            return RungResult(rung=rung, task=ctx.task(rung), state="green", tool="fake")

        return run

    def red(self, rung: RungName, after: anyio.Event | None = None) -> Rung:
        async def run(ctx: RungContext) -> RungResult:
            if after is not None:
                await after.wait()
            found = Diagnostic(file="src/add.js", line=2, code="failed", message="adds")
            self.tests_red.set()
            return RungResult(
                rung=rung, task=ctx.task(rung), state="red", tool="fake", diagnostics=[found]
            )

        return run

    def check(self, rung: RungName, *, wait_on_start: bool, after: anyio.Event) -> Rung:
        """A type check that waits for `after`, then (if told) on a start that never ends;
        else ends red with its own finding."""

        async def run(ctx: RungContext) -> RungResult:
            try:
                await after.wait()
                if wait_on_start:
                    with ctx.long_waits.waiting(rung):
                        self.waiting.set()
                        await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(rung)
                raise
            found = Diagnostic(file="src/add.js", line=2, code="TS2322", message="type")
            return RungResult(
                rung=rung, task=ctx.task(rung), state="red", tool="fake", diagnostics=[found]
            )

        return run


async def _climb(root: Path, events: list[Event]) -> LadderResult:
    bus = InMemoryEventBus(str(root))
    bus.subscribe(events.append)
    with anyio.fail_after(30):  # a climb that waits on the endless start never ends
        return await run_ladder(root, LadderRequest(policy="standard"), bus=bus)


def _project(root: Path) -> Path:
    package = {"name": "tiny", "private": True, "type": "module", "scripts": {"test": "x"}}
    commit_tree(root, {"package.json": json.dumps(package), "src/add.js": _ADD})
    write(root, "src/add.js", _ADD.replace("a + b", "a - b"))
    return root


@pytest.mark.parametrize("tests_first", [True, False])
async def test_a_red_of_the_tests_ends_the_climb_while_the_type_check_waits_on_a_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tests_first: bool
) -> None:
    script = _Script()
    monkeypatch.setitem(node_rungs.RUNNERS, "diagnose.files", script.green("diagnose.files"))
    # Either order: the tests red before the check begins its wait, or while it waits.
    gate = script.tests_red if tests_first else anyio.Event()
    if not tests_first:
        gate.set()
    check = script.check("compile.project", wait_on_start=True, after=gate)
    monkeypatch.setitem(node_rungs.RUNNERS, "compile.project", check)
    tests = script.red("test.scoped", after=None if tests_first else script.waiting)
    monkeypatch.setitem(node_rungs.RUNNERS, "test.scoped", tests)
    events: list[Event] = []
    result = await _climb(_project(tmp_path), events)
    assert [(r.rung, r.state, r.reason) for r in result.rungs] == [
        ("diagnose.files", "green", None),
        ("compile.project", "cancelled", "stopped: test.scoped is red"),
        ("test.scoped", "red", None),
    ], result
    assert result.state == "red"
    assert script.cancelled == ["compile.project"]
    kinds = [(e.kind.rsplit(".", 1)[-1], e.data["rung"]) for e in events if "rung" in e.data]
    assert kinds == [
        ("started", "diagnose.files"),
        ("completed", "diagnose.files"),
        ("started", "compile.project"),
        ("cancelled", "compile.project"),
        ("started", "test.scoped"),
        ("failed", "test.scoped"),
    ]


async def test_a_type_check_not_waiting_on_a_start_keeps_its_own_red(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tests end red first, the check answers after them: its red is the verdict's and
    # the tests are not reached, as in a climb without a start to wait on.
    script = _Script()
    monkeypatch.setitem(node_rungs.RUNNERS, "diagnose.files", script.green("diagnose.files"))
    check = script.check("compile.project", wait_on_start=False, after=script.tests_red)
    monkeypatch.setitem(node_rungs.RUNNERS, "compile.project", check)
    monkeypatch.setitem(node_rungs.RUNNERS, "test.scoped", script.red("test.scoped"))
    result = await _climb(_project(tmp_path), [])
    assert [(r.rung, r.state, r.reason) for r in result.rungs] == [
        ("diagnose.files", "green", None),
        ("compile.project", "red", None),
        ("test.scoped", "skipped", "not reached: compile.project is red"),
    ], result
    assert script.cancelled == []
