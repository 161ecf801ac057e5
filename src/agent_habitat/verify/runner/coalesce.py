"""Merging verify requests that arrive within the coalesce window into one run: the union
of their files, rungs and filters, and the highest policy (DESIGN §5 "Runner")."""

from __future__ import annotations

from collections.abc import Sequence

from ..models import POLICIES, RUNGS, LadderRequest, Policy, RungName

__all__ = ["covers", "idle", "merge_requests", "rungs_of"]

_ORDER: tuple[Policy, ...] = tuple(POLICIES)


def rungs_of(request: LadderRequest, default: Policy) -> list[RungName]:
    wanted = set(request.rungs or POLICIES[request.policy or default])
    return [r for r in RUNGS if r in wanted]


def idle(touched: Sequence[str], request: LadderRequest, rungs: Sequence[RungName]) -> bool:
    """A climb with no work: the tree is HEAD's and nothing was named or asked for the whole
    suite. Its rungs only say so, so it need not wait for the warm-up (a first verify of a
    clean tree waited 10 s for dmypy and the warm pytest to answer "nothing to verify")."""
    return not (touched or request.files or request.filter or "test.full" in rungs)


def merge_requests(
    requests: Sequence[LadderRequest], default: Policy, touched: Sequence[str]
) -> tuple[LadderRequest, list[str]]:
    """One request doing the work of all; `touched` is the dirty set of the run's snapshot
    (a request without files means "the dirty set"). Returns notes on what was given up."""
    notes: list[str] = []
    policy = max((r.policy or default for r in requests), key=_ORDER.index)
    rungs: list[RungName] | None = None
    if any(r.rungs for r in requests):
        wanted = {rung for r in requests for rung in rungs_of(r, default)}
        rungs = [r for r in RUNGS if r in wanted]
    files: list[str] | None = None
    if any(r.files for r in requests):
        chosen = {f for r in requests for f in (r.files or touched)}
        files = sorted(chosen)
    filters: list[str] | None = None
    if all(r.filter for r in requests):
        filters = list(dict.fromkeys(f for r in requests for f in r.filter or []))
    elif any(r.filter for r in requests):
        # A filter narrows the tests; another request wants every affected test, and the
        # wider selection is the one that cannot miss a failure.
        dropped = sorted({f for r in requests for f in r.filter or []})
        notes.append(f"coalesced: filter {dropped} dropped for the affected-test selection")
    merged = LadderRequest(policy=policy, rungs=rungs, files=files, filter=filters)
    return merged, notes


def covers(
    done: LadderRequest, new: LadderRequest, default: Policy, touched: Sequence[str] = ()
) -> bool:
    """True when a run of `done` does every check `new` asks for (on the same tree);
    `touched` is the change that run verifies (what a request without files means)."""
    if not set(rungs_of(new, default)) <= set(rungs_of(done, default)):
        return False
    if new.files and not set(new.files) <= set(done.files or touched):
        return False
    if new.filter != done.filter:
        return False
    return not (new.files is None and done.files is not None)
