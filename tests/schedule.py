"""The order xdist hands out the suite's modules in: the longest first.

`make test` runs `--dist loadfile` (a worker takes a whole module, so a module's fixtures are
set up once) with xdist's own reordering off; the root conftest then sorts the modules by
`slowest_modules.txt`, longest first, and the rest after them in collection order. In
collection order the longest modules (tests/verify/ is last) began while the others ended,
and two or three workers stood idle while the last ran alone.

The list is a measured order, not a promise: a module missing from it or listed out of
place only runs later than it could. To make it again from a run's `--durations=0` output:
`python tests/schedule.py LOG > tests/slowest_modules.txt`.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

__all__ = ["longest_first", "tell_worker"]

_LIST = Path(__file__).with_name("slowest_modules.txt")
_LISTED = 80
"""Modules listed: the rest of the suite's modules take seconds each."""


def tell_worker(config: pytest.Config, workerinput: dict[str, object]) -> None:
    """What the controller passes a worker it starts: xdist sets a worker's own `dist` to
    "no", and the worker collects (and sorts) the tests the controller hands out."""
    workerinput["dist"] = config.getoption("dist")


def longest_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sorts `items` in place when whole modules go to workers (`--dist loadfile`)."""
    workerinput = getattr(config, "workerinput", {})
    if workerinput.get("dist", config.getoption("dist", "no")) not in ("loadfile", "loadscope"):
        return  # `--dist load` hands out runs of consecutive tests: this order would load one
    lines = _LIST.read_text(encoding="utf-8").splitlines()
    rank = {name: i for i, name in enumerate(n for n in lines if n and not n.startswith("#"))}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def _from_durations(log: str) -> list[str]:
    spent: defaultdict[str, float] = defaultdict(float)
    for line in log.splitlines():
        found = re.match(r"([\d.]+)s (?:call|setup|teardown)\s+(\S+?\.py)::", line)
        if found:
            spent[found[2]] += float(found[1])
    return sorted(spent, key=spent.__getitem__, reverse=True)[:_LISTED]


if __name__ == "__main__":
    print("# The suite's slowest modules, longest first (tests/schedule.py says how it is made).")
    print(*_from_durations(Path(sys.argv[1]).read_text(encoding="utf-8")), sep="\n")
