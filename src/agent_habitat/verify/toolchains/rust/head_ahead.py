"""A red run's failed tests asked of HEAD while the run goes on.

HEAD's outcomes of a red `cargo test`'s failed tests (head_tests.py) were asked once the
run ended, in one run on HEAD after it: with many doc tests that was most of what the
verdict waited for beyond the run itself (textwrap 0.16.1, one removed statement: 24 of its
59 doc tests failed, the tree's doc tests took 60 s and HEAD's rerun of the failed ones 19 s
more, at load 33; rustdoc compiles each doc test on its own). The run says each failed test
as it ends (`test NAME ... FAILED`), and which arguments select its target: cargo's `to rerun
pass` once that target ended, and for a crate's doc tests, which cargo names only at the end
of the run, `-p CRATE --doc` as cargo says it then. So once HEAD's build of the same test
targets is done (`prebuild_on_head`, started when the tree's build ended), the failures
named so far are asked of HEAD in batches while the run goes on, each batch as narrowed as
the rung's own ask (`narrowed`), and its outcomes are kept where `settle_tests` looks them
up (`remember_head_run`, keyed by the same command): the rung's own ask at the end runs only
the failures no batch answered. A batch never starts once the run ended, and the rung's ask
waits for one under way (one cargo at a time builds in HEAD's target folder anyway).
Nothing but the compiler and the failed tests runs on HEAD, as before."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import anyio.to_thread

from ...head import HeadTree
from ...models import RungName
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun, known_on_head, remember_head_run
from .head_tests import failed_on_head, name_key, narrowed
from .messages import failed_so_far
from .metadata import CrateGraph
from .spool_watch import LOOK_EVERY_S

__all__ = ["ask_ahead"]

logger = logging.getLogger(__name__)


def _doc_args(graph: CrateGraph) -> dict[str, str]:
    """A doc-tested crate's name as cargo says it (`Doc-tests text_wrap`) → the arguments
    cargo's `to rerun pass` gives its doc tests."""
    return {c.name.replace("-", "_"): f"-p {c.name} --doc" for c in graph.crates.values()}


async def ask_ahead(
    ctx: RungContext,
    rung: RungName,
    graph: CrateGraph,
    run: list[str],
    *,
    spool: Path,
    built: anyio.Event,
    ended: anyio.Event,
    asking: anyio.Lock,
    cache_key: Callable[[], str],
) -> int:
    """The failed tests of `run` (writing to `spool`) asked of HEAD in batches as they come
    (see the module), from the moment HEAD's test build is done (`built`) until the run
    `ended`; each batch holds `asking`. How many batches ran. `cache_key`: where the rung
    keeps HEAD's outcomes, once the build is done (it reads the lock file, which a first
    build may write)."""
    head = head_of(ctx)
    if isinstance(head, str):
        return 0
    await built.wait()
    key = cache_key()
    docs = _doc_args(graph)
    asked: set[str] = set()
    batches = 0
    while not ended.is_set():
        try:
            text = await anyio.to_thread.run_sync(spool.read_text, "utf-8", "replace")
        except OSError:
            text = ""
        named = failed_so_far(text, docs.get)
        new = {n: a for n, a in named.items() if name_key(n) not in asked}
        if new:
            async with asking:
                if ended.is_set():
                    break
                known = await known_on_head(ctx, key)
                if known is None:
                    return batches  # every test of the command is known on HEAD
                keys = sorted({name_key(n) for n in new} - known - asked)
                asked.update(name_key(n) for n in new)
                if keys:
                    if not await _batch(ctx, rung, head, run, new, keys, key, batches):
                        return batches  # HEAD could not answer: the rung's own ask says why
                    batches += 1
            continue
        with anyio.move_on_after(LOOK_EVERY_S * 5):
            await ended.wait()
    return batches


async def _batch(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    run: list[str],
    reruns: dict[str, str],
    keys: Sequence[str],
    cache_key: str,
    n: int,
) -> bool:
    """One batch: HEAD's outcomes of `keys` kept; False when HEAD could not give them."""
    plan = narrowed([run], [reruns], list(keys))
    if plan is None:
        return False
    ran = HeadRun()
    for argv in plan:
        found = await failed_on_head(
            ctx, rung, head, argv, whole=False, suffix=f".head-ahead{n or ''}.out"
        )
        if isinstance(found, str):
            logger.debug("HEAD's run of failed tests ahead: %s", found)
            return False
        ran.failed.update(found.failed)
    for key in keys:
        ran.failed.setdefault(key, 0)  # asked, not run on HEAD: a test HEAD does not have
    await remember_head_run(ctx, cache_key, ran)
    return True
