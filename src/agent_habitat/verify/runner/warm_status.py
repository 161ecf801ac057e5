"""The warm-up as `habitat status` and `habitat host status` tell it, read from `warm.json`.

The warm-up (warmup.py) writes the file when it starts, after each step and when it ends,
with the process that runs it. A reader tells what is true now, not what the file said when
it was written: a warm-up still under way lists the steps it has not reached as pending, one
whose process ended before it finished says so, and a daemon a step left warm (dmypy, a
language server, the warm pytest) reads as warm only while that very process (its pid) is
alive: a host restarted since has its own, and the old pid is not it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...proc import ProcessRecord, is_alive
from ...workspace import Workspace
from ..rungs import warm_records

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "FILE",
    "STEPS",
    "WarmItem",
    "pytest_glance",
    "read_warm",
    "warm_lines",
    "warm_pytest_pid",
    "warmup_glance",
]

FILE = "warm.json"
STEPS = ("import_graph", "test_deps", "lint_baseline", "type_daemon", "pytest")


@dataclass
class WarmItem:
    state: str
    """`warm`, `skipped` (nothing to warm, or turned off), `fresh` (the warm pytest would not
    be faithful here, so the test runs are fresh, rightly) or `failed`."""
    detail: str
    duration_s: float = 0.0
    pid: int | None = None
    """The daemon the step left warm (dmypy, a language server, the warm pytest): `habitat
    status` calls it warm only while that very process lives."""


def read_warm(workspace: Workspace) -> dict[str, Any] | None:
    try:
        data = json.loads((workspace.state_dir / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no warm-up ran here (no server opened the project, or it is turned off)
    return data if isinstance(data, dict) else None


def _owner_alive(data: dict[str, Any]) -> bool:
    owner = data.get("owner")
    if not isinstance(owner, dict):
        return False
    try:
        return is_alive(ProcessRecord(int(owner["pid"]), float(owner["create_time"])))
    except (KeyError, TypeError, ValueError):
        return False


def _gone(name: str, item: dict[str, Any], workspace: Workspace) -> str | None:
    """Why a step's warm daemon is not warm now (None: it still is)."""
    detail, pid = str(item.get("detail", "")), item.get("pid")
    if name == "type_daemon" and detail.startswith("dmypy daemon"):
        if not (workspace.state_dir / "dmypy" / "status.json").exists():
            return "the dmypy daemon has exited since"  # `DmypyDaemon.state()`: absent
        from ..rungs.dmypy import DmypyDaemon  # here: its rung's module is most of a status

        daemon = DmypyDaemon(workspace)
        if daemon.state() != "alive" or (pid is not None and daemon.pid() != pid):
            return "the dmypy daemon has exited since"
    if name == "type_daemon" and "language server pid" in detail:
        pids = {c["pid"] for c in warm_records.live(workspace)}
        if not pids or (pid is not None and pid not in pids):
            return "the language server has exited since"
    if name == "pytest":
        live = warm_pytest_pid(workspace)
        if live is None or (pid is not None and live != pid):
            return "the warm pytest has exited since"
    return None


def warm_pytest_pid(workspace: Workspace) -> int | None:
    """The live warm pytest's pid (`WarmPytest.record`), None when there is none; its module
    (anyio, the rung's process tools) loads only when it left its status file."""
    if not (workspace.state_dir / "pytest-warm" / "status.json").exists():
        return None  # `WarmPytest.status()` finds none
    from ..rungs.warm_pytest import WarmPytest

    record = WarmPytest(workspace).record()
    return None if record is None else record.pid


def _store_dir(workspace: Workspace) -> Path:
    from ..deps_store import deps_store_dir  # the store's place, once a step asks for it

    return deps_store_dir(workspace.state_dir)


def _changed_since(workspace: Workspace, data: dict[str, Any]) -> os.stat_result | None:
    """The test dependency store's stat when it was written after the warm-up began (the
    background recording, a verify's test run), else None."""
    try:
        st = (_store_dir(workspace) / "deps.json").stat()
    except OSError:
        return None
    started = data.get("started_at")
    if not isinstance(started, int | float) or st.st_mtime <= started:
        return None
    return st


def _recorded_since(workspace: Workspace, data: dict[str, Any]) -> str | None:
    """When test dependencies were recorded after the warm-up found none, else None."""
    st = _changed_since(workspace, data)
    return None if st is None else time.strftime("%H:%M:%S", time.localtime(st.st_mtime))


_SUMMARIES: dict[str, tuple[tuple[int, int], str | None]] = {}
"""The store's summary by its path, with the (mtime, size) it was read at: a long-lived host
answering `habitat status` reads the store again only when it changed."""


def _deps_now(workspace: Workspace, data: dict[str, Any]) -> str | None:
    """The store's record as it is now (`40 tests, recorded …`) when a run wrote it after
    the warm-up read it, else None: the warm-up's line was a snapshot (a trial read "38
    tests" while later verifies' notes said 40 were on record)."""
    st = _changed_since(workspace, data)
    if st is None:
        return None
    directory = _store_dir(workspace)
    key, seen = (st.st_mtime_ns, st.st_size), _SUMMARIES.get(str(directory))
    if seen is not None and seen[0] == key:
        return seen[1]
    from ..deps_store import load_testdeps  # its module: only for a store written since

    deps = load_testdeps(directory)
    summary = deps.summary if deps is not None and deps.tests else None
    _SUMMARIES[str(directory)] = (key, summary)
    return summary


def _started_since(detail: str, workspace: Workspace) -> str:
    """The warm-up's `X did not start (…)`, with the X a verify has started since (destr
    2.0.5: "eslint did not start" stood beside the live eslint linter's own line)."""
    since = [
        f"{c['tool']} {'starting' if c.get('starting') else 'started'} since (pid {c['pid']})"
        for c in warm_records.live(workspace)
        if c.get("tool") and f"{c['tool']} did not start" in detail
    ]
    return "; ".join([detail, *since])


def warm_lines(workspace: Workspace) -> list[str]:
    """What the last warm-up of the workspace warmed, one line per step (for `habitat
    status`), none when no warm-up ran; each as it is now, not as it was."""
    data = read_warm(workspace)
    if data is None:
        return []
    items: dict[str, Any] = data.get("items") or {}
    out: list[str] = []
    running = "finished_at" in data and data["finished_at"] is None
    alive = running and _owner_alive(data)
    if running:
        pid = (data.get("owner") or {}).get("pid", "?")
        out.append(
            f"warm: warming up (pid {pid}), {len(items)} of {len(STEPS)} steps done"
            if alive
            else f"warm: the warm-up of pid {pid} ended before it finished"
        )
    left = [s for s in STEPS if running and s not in items]
    # The steps under way (side by side, once no verify runs); a file without the list
    # (an older habitat's) ran them in order, the first one left in progress.
    begun = data.get("begun", left[:1])
    for name in [*items, *left]:
        item = items.get(name)
        label = name.replace("_", " ")
        if item is None:
            now = ("in progress" if name in begun else "pending") if alive else "not reached"
            out.append(f"warm: {label}: {now}")
            continue
        state, detail = item.get("state", "?"), item.get("detail", "")
        if state == "warm" and (why := _gone(name, item, workspace)) is not None:
            state, detail = "cold", why
        if name == "test_deps" and state == "warm":
            detail = _deps_now(workspace, data) or detail
        if name == "test_deps" and state == "skipped":
            since = _recorded_since(workspace, data)
            if since is not None:
                state, detail = "recorded", f"since the warm-up, at {since}"
        if name == "type_daemon":
            detail = _started_since(detail, workspace)
        if state == "fresh":
            out.append(f"warm: {label}: fresh ({detail})")
            continue
        out.append(f"warm: {label}: {state} — {detail}")
    return out


def warmup_glance(workspace: Workspace) -> dict[str, object] | None:
    """A warm-up under way, for `habitat host status`: its pid, the steps done and those in
    progress; one whose process ended before it finished says so. None when no warm-up runs
    (none ran here, or the last one finished: the daemons it left speak for it)."""
    data = read_warm(workspace)
    if data is None or "finished_at" not in data or data["finished_at"] is not None:
        return None
    items: dict[str, Any] = data.get("items") or {}
    pid = (data.get("owner") or {}).get("pid")
    if not _owner_alive(data):
        return {"state": "ended early", "pid": pid, "done": len(items), "steps": len(STEPS)}
    left = [s for s in STEPS if s not in items]
    begun = [s for s in data.get("begun", left[:1]) if s in left]
    return {
        "state": "under way",
        "pid": pid,
        "done": len(items),
        "steps": len(STEPS),
        "in_progress": [s.replace("_", " ") for s in begun],
    }


def pytest_glance(workspace: Workspace) -> dict[str, object]:
    """The warm pytest as it is now, for `habitat host status`: `warm` with its pid, else
    what the last warm-up decided (`fresh` with why, `failed`, `skipped`, `cold`), else
    `none` (no warm-up ran here, or it has not reached pytest yet)."""
    live = warm_pytest_pid(workspace)
    if live is not None:
        return {"state": "warm", "pid": live}
    data = read_warm(workspace)
    item = (data or {}).get("items", {}).get("pytest")
    if not isinstance(item, dict):
        return {"state": "none"}
    state = item.get("state", "none")
    if state == "warm":
        return {"state": "cold", "why": "the warm pytest has exited since"}
    return {"state": state, "why": item.get("detail", "")}
