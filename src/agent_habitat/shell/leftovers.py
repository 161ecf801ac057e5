"""What runs left running when they ended (`cmd &`, daemons): kept in the run's folder.

A run that ends while processes it started live on says so (`left_running`), and `kill` /
`close` on its tab still stop them. The file of a tab's newest ended run also carries the
still-living leftovers of the runs before it, so the scene and `kill` read one file per tab.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..proc import ProcessRecord
from ..proc.spawner import Spawner
from .models import LeftProcess

__all__ = ["Leftover", "alive", "read", "write"]

_FILE = "left_running.json"


@dataclass(frozen=True)
class Leftover:
    index: int
    """The tab's run that started it."""
    record: ProcessRecord

    def model(self) -> LeftProcess:
        return LeftProcess(pid=self.record.pid, command=self.record.command or "", index=self.index)


def write(run_dir: Path, left: list[Leftover]) -> None:
    path = run_dir / _FILE
    if not left:
        with contextlib.suppress(OSError):
            path.unlink()
        return
    rows = [
        {
            "index": item.index,
            "pid": item.record.pid,
            "create_time": item.record.create_time,
            "marker": item.record.marker,
            "command": item.record.command,
        }
        for item in left
    ]
    with contextlib.suppress(OSError):  # the folder went with a closed tab
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as out:
            json.dump(rows, out)


def read(run_dir: Path) -> list[Leftover]:
    try:
        rows = json.loads((run_dir / _FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found: list[Leftover] = []
    for row in rows if isinstance(rows, list) else []:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            record = ProcessRecord(
                int(row["pid"]), float(row["create_time"]), row["marker"], row["command"]
            )
            found.append(Leftover(int(row["index"]), record))
    return found


def alive(spawner: Spawner, left: list[Leftover]) -> list[Leftover]:
    """Those still running (same pid and start time)."""
    return [item for item in left if spawner.adopt(item.record).alive()]
