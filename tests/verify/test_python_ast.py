"""Every build of `ast` objects in the habitat goes through `verify.python_ast.parse`, one at a
time: CPython 3.11's AST constructor counts its recursion in one state per interpreter, so a
build that another thread's build interrupts (a garbage collection runs Python code, the GIL
changes hands) ends in `SystemError: AST constructor recursion depth mismatch` (glom 25.12.0:
diagnose.files' syntax check of core.py beside compile.project's comment check)."""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.verify import python_ast

SRC = Path(python_ast.__file__).resolve().parents[1]
BIG = "\n".join(f"value_{i} = [{i}, ({i}, '{i}'), {{'k': {i}}}]" for i in range(300))


class _CountingLock:
    """The module's lock, counting who arrived at it (before waiting for it)."""

    def __init__(self) -> None:
        self.real = threading.Lock()
        self.arrived = 0
        self.changed = threading.Condition()

    def __enter__(self) -> None:
        with self.changed:
            self.arrived += 1
            self.changed.notify_all()
        self.real.acquire()

    def __exit__(self, *exc: object) -> None:
        self.real.release()


@pytest.fixture
def collections_often() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(100)
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("collections_often")
def test_a_build_on_another_thread_waits_for_the_build_under_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lock = _CountingLock()
    monkeypatch.setattr(python_ast, "_LOCK", lock)
    other_result: list[Any] = []
    other = threading.Thread(
        target=lambda: other_result.append(python_ast.parse("y = [1, (2, 3)]")), daemon=True
    )
    collections = 0

    def during_collection(phase: str, info: dict[str, int]) -> None:
        nonlocal collections
        if phase != "start" or threading.current_thread() is other:
            return
        collections += 1
        if collections != 5:
            return
        # Mid-build: the other thread builds now, or (with the lock) reaches the lock.
        other.start()
        with lock.changed:
            assert lock.changed.wait_for(lambda: lock.arrived >= 2 or not other.is_alive(), 30)

    gc.callbacks.append(during_collection)
    try:
        tree = python_ast.parse(BIG)  # before the lock: SystemError, recursion depth mismatch
    finally:
        gc.callbacks.remove(during_collection)
    other.join(30)
    assert collections >= 5
    assert len(tree.body) == 300
    assert len(other_result) == 1


def _builds_outside(path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8")
    for match in re.finditer(r"\bast\.parse\(|PyCF_ONLY_AST|flags=0x400", text):
        yield f"{path.relative_to(SRC)}:{text.count(chr(10), 0, match.start()) + 1}"


def test_no_module_builds_ast_objects_but_through_python_ast() -> None:
    own = Path(python_ast.__file__).resolve()
    found = [
        where
        for path in sorted(SRC.rglob("*.py"))
        if path.resolve() != own
        for where in _builds_outside(path)
    ]
    assert found == []
