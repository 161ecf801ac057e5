"""What a climb's change reaches, read once per climb: the touched files changed only inside
`#[cfg(test)]` modules (test_code.py), the touched files other crates read through a macro
(includes.py), and so the crates it affects (`CrateGraph.affected`); and HEAD's export,
started as a Rust rung starts (`export_ahead`)."""

from __future__ import annotations

import logging
import threading

import anyio
import anyio.to_thread

from ...head import HeadTree
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from .includes import readers
from .metadata import Affected, CrateGraph
from .test_code import only_test_code

__all__ = ["affected_of", "export_ahead", "only_test_code_of"]

logger = logging.getLogger(__name__)

_TEST_CODE: dict[tuple[str, str], tuple[frozenset[str], dict[str, list[str]]]] = {}
"""(ladder id, root) → the touched files changed only inside `#[cfg(test)]` modules, and
the touched files other crates read through a macro (includes.py)."""

_ONLY_TEST: dict[tuple[str, str], frozenset[str]] = {}
"""(ladder id, root) → the touched files changed only inside `#[cfg(test)]` modules."""

_READING: dict[tuple[str, str], anyio.Event] = {}
"""(ladder id, root) → set once the reading of `_ONLY_TEST` under way for it ends: the
rungs that start together read the touched files and HEAD's text of them once."""

_EXPORTED_AHEAD: set[tuple[str, str]] = set()
"""(HEAD's export folder, HEAD commit) whose export `export_ahead` started."""


def _test_code(ctx: RungContext) -> frozenset[str]:
    # Blocking: reads the touched .rs files and HEAD's text of them through git.
    snapshot = ctx.snapshot
    if not snapshot.in_git or snapshot.head is None:
        return frozenset()
    head = ctx.head or HeadTree(ctx.root, snapshot.head, ctx.workspace.state_dir)
    found: set[str] = set()
    for rel in ctx.existing([p for p in ctx.touched if p.endswith(".rs")]):
        try:
            now = (ctx.root / rel).read_text(encoding="utf-8").splitlines()
            if only_test_code(now, head.lines(rel)):
                found.add(rel)
        except (OSError, UnicodeDecodeError):
            continue
    return frozenset(found)


def _readers(ctx: RungContext, graph: CrateGraph) -> dict[str, list[str]]:
    # Blocking. One crate: every file of the project reaches it already.
    if len(graph.crates) < 2 or not ctx.touched:
        return {}
    return readers(ctx.root, graph, ctx.touched)


async def only_test_code_of(ctx: RungContext) -> frozenset[str]:
    """`_test_code` of the climb, read once (a second asker waits for the first)."""
    key = (ctx.ladder_id, str(ctx.root))
    while key not in _ONLY_TEST and key in _READING:
        await _READING[key].wait()
    if key in _ONLY_TEST:
        return _ONLY_TEST[key]
    _READING[key] = read = anyio.Event()
    try:
        found = await anyio.to_thread.run_sync(_test_code, ctx)
        while len(_ONLY_TEST) >= 16:
            del _ONLY_TEST[next(iter(_ONLY_TEST))]
        _ONLY_TEST[key] = found
        return found
    finally:
        del _READING[key]
        read.set()


def export_ahead(ctx: RungContext) -> None:
    """HEAD's export (unpacked alone, `HeadTree.export(overlay=False)`) started in a thread
    of its own as a climb's Rust rung starts, once per HEAD: HEAD's check of a first
    compile error and HEAD's test build run there, and their turn came after `cargo
    metadata`, the touched files' reading and the tests' start (the export 0.5 s more at
    load 40, scopeguard traced). Nothing of the project runs; a rung that needs the export
    waits for this one's end (`HeadTree.export` takes turns)."""
    head = head_of(ctx)
    if isinstance(head, str) or (key := (str(head.export_dir), head.head)) in _EXPORTED_AHEAD:
        return
    if len(_EXPORTED_AHEAD) >= 64:
        _EXPORTED_AHEAD.clear()
    _EXPORTED_AHEAD.add(key)

    def export() -> None:
        try:
            head.export(overlay=False)
        except Exception:  # best effort, in a thread of its own: a rung's own export says why
            logger.debug("HEAD's export ahead failed", exc_info=True)

    threading.Thread(target=export, name="habitat-head-export", daemon=True).start()


async def affected_of(ctx: RungContext, graph: CrateGraph) -> Affected:
    """The crates the climb's change reaches (`CrateGraph.affected`), with the touched files
    that changed only inside `#[cfg(test)]` modules (test_code.py) and those other crates
    include (includes.py), read once per climb."""
    key = (ctx.ladder_id, str(ctx.root))
    if key not in _TEST_CODE:
        found = await only_test_code_of(ctx)
        read = await anyio.to_thread.run_sync(_readers, ctx, graph)
        while len(_TEST_CODE) >= 16:
            del _TEST_CODE[next(iter(_TEST_CODE))]
        _TEST_CODE[key] = (found, read)
    test_code, read = _TEST_CODE[key]
    return graph.affected(ctx.touched, test_code, read)
