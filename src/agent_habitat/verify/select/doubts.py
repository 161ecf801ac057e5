"""Which recorded runs can still vouch for their tests, and the recorded tests to run
because none of their runs can (the selection's doubts, selection.py)."""

from __future__ import annotations

import fnmatch

from ..config import LadderConfig
from ..deps_store import RecordedDeps
from .deps import Narrowing

__all__ = ["doubt_moved_data", "doubted"]


def doubt_moved_data(
    deps: RecordedDeps,
    narrowing: Narrowing,
    config: LadderConfig,
    doubts: dict[str, dict[str, str]],
) -> None:
    """A run that saw other content of a non-Python file than there is now (committed since,
    a branch switch) vouches for none of its tests; one that saw it as it is still can (glom
    25.12.0: egg-info committed after the recording of HEAD's export sent every verify at the
    new HEAD to the whole suite, though later runs there had seen it)."""
    for rid, data in narrowing.run_data.items():
        counted = [
            rel
            for rel in data
            if not any(fnmatch.fnmatch(rel, pat) for pat in config.selection_ignore)
        ]
        run = deps.runs.get(rid)
        if not counted or run is None:
            continue
        why = f"non-Python file {counted[0]} changed since the run on record"
        for i in deps.owned(run):
            doubts.setdefault(rid, {}).setdefault(run.tests[i], why)


def doubted(
    deps: RecordedDeps, narrowing: Narrowing, doubts: dict[str, dict[str, str]]
) -> dict[str, str]:
    """Recorded tests to run: those without a record, and those none of whose records
    can vouch for them now."""
    picked: dict[str, str] = {}
    for test, why in narrowing.tests.items():
        picked.setdefault(test, f"{test.partition('[')[0]} {why}")
    for test, rids in deps.records.items():
        if all(test in doubts.get(rid, {}) for rid in rids):
            picked.setdefault(test, f"{test.partition('[')[0]} {doubts[rids[0]][test]}")
    return picked
