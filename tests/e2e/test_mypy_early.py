"""A one-shot verify's plain mypy begun as the process starts (verify/rungs/mypy_early.py):
the one-shot climb's `compile.project` takes it over when it is the very command it would
run over the whole package, keeps only the affected modules' errors and still compares them
with HEAD; anything else begins nothing or is stopped. Real mypy, real processes."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.to_thread
import psutil
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.proc import is_alive
from agent_habitat.verify import LadderRequest, RungResult, run_ladder, stop_type_daemon
from agent_habitat.verify.rungs import mypy_early
from agent_habitat.workspace import Workspace
from git_tree import IGNORED, commit_tree
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

_TAKEN = "begun over the whole package as the verify started"


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Path]:
    # `other` has a type error at HEAD and imports nothing of `core`: outside what a change
    # of `core` affects. `user` imports `core`.
    root = commit_tree(
        tmp_path / "shop",
        {
            "shop/__init__.py": "",
            "shop/core.py": "def double(x: int) -> int:\n    return x * 2\n",
            "shop/user.py": "from shop.core import double\n\n\ndef four() -> int:\n"
            "    return double(2)\n",
            "shop/other.py": 'def name() -> int:\n    return "old"\n',
            ".gitignore": IGNORED,
            "pyproject.toml": '[project]\nname = "shop"\nversion = "0"\n\n'
            f"[tool.habitat.ladder]\npython = {sys.executable!r}\n",
        },
    )
    yield root
    await mypy_early.drop()
    await stop_type_daemon(root)


async def _begin(root: Path, policy: str | None, rungs: list[str] | None) -> bool:
    # Blocking, with an event loop of its own (the CLI calls it before its climb's).
    return await anyio.to_thread.run_sync(mypy_early.begin, root, policy, rungs)


async def _compile(root: Path) -> RungResult:
    request = LadderRequest(rungs=["compile.project"])
    result = await run_ladder(root, request, bus=InMemoryEventBus("t"), keeps_warm=False)
    (only,) = result.rungs
    return only


async def test_the_one_shot_climb_takes_it_over_and_keeps_the_affected_errors(shop: Path) -> None:
    _write(shop, "shop/core.py", 'def double(x: int) -> int:\n    return "x" * x\n')
    assert await _begin(shop, None, ["compile.project"])
    result = await _compile(shop)
    assert mypy_early._early == {}
    assert any(_TAKEN in note for note in result.notes), result.notes
    assert result.state == "red", result.reason
    files = {d.file for d in result.diagnostics}
    # The change's error is new; `other`'s (outside the affected modules) is not the rung's.
    assert files == {"shop/core.py"}, result.diagnostics
    assert result.new_findings == 1


async def test_an_error_at_head_in_an_affected_module_stays_not_red(shop: Path) -> None:
    # A change of code in `other` makes it affected: its error is HEAD's too.
    _write(shop, "shop/other.py", 'def name() -> int:\n    return "old"\n\n\nX = 1\n')
    assert await _begin(shop, None, None)
    result = await _compile(shop)
    assert any(_TAKEN in note for note in result.notes), result.notes
    assert result.state == "green", result.reason
    assert result.preexisting_findings == 1
    assert result.new_findings == 0


async def test_one_begun_before_a_file_changed_is_not_taken_over(shop: Path) -> None:
    # Changed after the start and before the climb's snapshot: the early check may have read
    # it as it was, so the climb checks the tree as its snapshot holds it.
    assert await _begin(shop, None, ["compile.project"])
    _write(shop, "shop/core.py", 'def double(x: int) -> int:\n    return "x" * x\n')
    result = await _compile(shop)
    assert not any(_TAKEN in note for note in result.notes), result.notes
    assert result.state == "red", result.reason
    assert {d.file for d in result.diagnostics} == {"shop/core.py"}


async def test_a_policy_without_the_type_check_begins_nothing(shop: Path) -> None:
    assert not await _begin(shop, "minimal", None)
    assert not await _begin(shop, None, ["diagnose.files", "test.scoped"])
    assert mypy_early._early == {}


async def test_another_command_is_not_taken_and_what_is_left_is_stopped(shop: Path) -> None:
    assert await _begin(shop, None, None)
    workspace = Workspace.for_project(shop.resolve())
    (early,) = mypy_early._early.values()
    record = early.begun.sup.record
    other = [*early.begun.argv, "--strict"]
    assert mypy_early.take(workspace, other, shop.resolve(), early.env) is None
    assert mypy_early.take(workspace, early.begun.argv, shop.resolve(), {}) is None
    await mypy_early.drop()
    assert mypy_early._early == {}
    assert not is_alive(record)


async def test_a_one_shot_verify_leaves_no_early_mypy_running(shop: Path) -> None:
    # A comment-only change: the climb's `compile.project` has nothing to check and takes
    # nothing over, so the mypy begun first is stopped before the process exits.
    _write(shop, "shop/core.py", "# a note\ndef double(x: int) -> int:\n    return x * 2\n")
    argv = [sys.executable, "-m", "agent_habitat", "verify", "--no-host", "--json"]
    with anyio.fail_after(300):
        done = await anyio.run_process(
            [*argv, "--rung", "compile.project", "--project", str(shop)], check=False
        )
    assert json.loads(done.stdout)["state"] == "nothing_to_verify", done.stderr
    cache = str(Workspace.for_project(shop.resolve()).state_dir / "mypy-cache")
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if "mypy" in str(p.info["cmdline"]) and cache in (p.info["cmdline"] or [])
    ]
    assert left == []


async def test_begun_beside_its_caller_it_is_taken_over_once_begun_or_else_stopped(
    shop: Path,
) -> None:
    # The CLI's way: the settings read in the caller, the interpreter's probe and mypy's start
    # in a thread. The climb's `take` waits for that thread and takes the check over.
    _write(shop, "shop/core.py", 'def double(x: int) -> int:\n    return "x" * x\n')
    mypy_early.begin_beside(shop, None, ["compile.project"])
    result = await _compile(shop)
    assert any(_TAKEN in note for note in result.notes), result.notes
    assert result.state == "red", result.reason
    assert {d.file for d in result.diagnostics} == {"shop/core.py"}
    # A drop at once (the thread may still be probing) waits for it, then stops what began.
    mypy_early.begin_beside(shop, None, None)
    await mypy_early.drop()
    assert mypy_early._early == {}
    assert mypy_early._beside == []
    cache = str(Workspace.for_project(shop.resolve()).state_dir / "mypy-cache")
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if "mypy" in str(p.info["cmdline"]) and cache in (p.info["cmdline"] or [])
    ]
    assert left == []
