"""The order xdist hands out the suite's modules in: the longest first.

`make test` runs `--dist loadfile` (a worker takes a whole module, so a module's fixtures are
set up once) with xdist's own reordering off; the root conftest then sorts the modules by
`slowest_modules.txt`, longest first. In collection order the longest modules (tests/verify/
is last) began while the others ended, and two or three workers stood idle while the last ran
alone.

The list names every module a run timed, so a module missing from it was written since (or
all its tests took under 5 ms, which `--durations=0` hides): those go first, in collection
order. A long module nobody has timed yet then starts in the first wave instead of after
everything else, where it is the run's tail (the list held the longest 80 of 268 modules; 7
modules with a test among a loaded run's slowest 40 were not in it, test_mypy_stdlib's one
test of 14.7 s among them, and began after every listed one); a short one first delays the
others by its seconds only. The list is a measured order, not a promise: a module listed out
of place only runs later than it could. To make it again from a run's `--durations=0`
output: `python tests/schedule.py LOG > tests/slowest_modules.txt`.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["from_durations", "longest_first", "rank_of", "tell_worker"]

_LIST = Path(__file__).with_name("slowest_modules.txt")


def tell_worker(config: pytest.Config, workerinput: dict[str, object]) -> None:
    """What the controller passes a worker it starts: xdist sets a worker's own `dist` to
    "no", and the worker collects (and sorts) the tests the controller hands out."""
    workerinput["dist"] = config.getoption("dist")


def longest_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sorts `items` in place when whole modules go to workers (`--dist loadfile`)."""
    workerinput = getattr(config, "workerinput", {})
    if workerinput.get("dist", config.getoption("dist", "no")) not in ("loadfile", "loadscope"):
        return  # `--dist load` hands out runs of consecutive tests: this order would load one
    rank = rank_of(_LIST.read_text(encoding="utf-8").splitlines())
    items.sort(key=lambda item: rank(item.nodeid))


def rank_of(listed: list[str]) -> Callable[[str], int]:
    """A test's place by its module's line in `listed` (comments and blank lines aside); a
    module the list does not name comes before every listed one (the sort keeps their order)."""
    modules = (line for line in listed if line and not line.startswith("#"))
    place = {module: i for i, module in enumerate(modules)}
    return lambda nodeid: place.get(nodeid.split("::", 1)[0], -1)


def from_durations(log: str) -> list[str]:
    """Every module a `--durations=0` report times, longest first (setup, call and teardown
    of all its tests)."""
    spent: defaultdict[str, float] = defaultdict(float)
    for line in log.splitlines():
        found = re.match(r"([\d.]+)s (?:call|setup|teardown)\s+(\S+?\.py)::", line)
        if found:
            spent[found[2]] += float(found[1])
    return sorted(spent, key=spent.__getitem__, reverse=True)


if __name__ == "__main__":
    print("# The suite's slowest modules, longest first (tests/schedule.py says how it is made).")
    print(*from_durations(Path(sys.argv[1]).read_text(encoding="utf-8")), sep="\n")
