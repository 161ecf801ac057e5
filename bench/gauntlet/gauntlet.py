"""The gauntlet: issue 12's and 23's defects as seeded scenarios, with the figures that hold.

    .venv/bin/python bench/gauntlet/gauntlet.py [--seed N] [--short] [--json PATH]

`make gauntlet` runs the long version (20 host kills, 20 server kills); `make test` runs
the short one (tests/hardening/test_gauntlet.py). The same seed draws the same kill
moments, fuzzed calls and daemon shapes. Figures named in `MUST_BE_ZERO` fail the run when
they are not 0, and a scenario's figures must be exactly its `FIGURES`; the others
(latencies, byte counts) are printed for docs/reliability.md. The short version stops one
verify chain mid-rung (`verify_cancel`); the long one also kills its host.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE), str(_HERE.parent)]

import gauntlet_fuzz as fuzz  # noqa: E402
import gauntlet_inproc as inproc  # noqa: E402
import gauntlet_kills as kills  # noqa: E402
import gauntlet_special as special  # noqa: E402

from _report import print_table, write_json  # noqa: E402

MUST_BE_ZERO = (
    "runs lost",
    "run ids reused",
    "processes left",
    "left unsaid",
    "unanswered",
    "unanswered lines",
    "unanswered calls",
    "internal errors",
    "state paths open to others",
    "files holding the secret",
    "bytes unaccounted",
    "special files written",
    "verify cancel mid-rung: processes left",
    "verify host-kill mid-rung: processes left",
    "verify cancel: reported green",
    "verify host-kill: reported green",
)

# Every figure each scenario reports: a figure missing, renamed or added fails the run, so a
# must-be-zero figure cannot pass by no longer being there.
FIGURES: dict[str, frozenset[str]] = {
    name: frozenset(keys)
    for name, keys in {
        "left running": (
            "left unsaid",
            "processes left",
            "runs that left daemons",
            "said so (left_running)",
            "tracking",
            "untracked notes",
        ),
        "fuzzed tools": ("fuzzed calls", "internal errors", "unanswered"),
        "catastrophic regex": ("answered", "regex calls", "slowest answer s"),
        "secrets at rest": ("files holding the secret", "state paths open to others"),
        "special files": (
            "refused by type",
            "regular calls answered",
            "slowest call s",
            "special files",
            "special files written",
            "unanswered calls",
        ),
        "spool accounting": ("bytes unaccounted", "bytes written", "spool bytes"),
        "scene under load": ("scene calls", "scene p50 ms", "scene p99 ms", "writers"),
        "host kills": (
            "bridge recovered",
            "host kills",
            "hosts started as the bridge closed",
            "in-flight calls answered",
            "unanswered calls",
        ),
        "server kills": (
            "malformed lines",
            "processes left",
            "run ids reused",
            "runs lost",
            "server kills",
            "server kills survived",
            "unanswered lines",
        ),
        **{
            f"verify {how}": (
                f"verify {how} mid-rung: processes left",
                f"verify {how}: hosts started as the bridge closed",
                f"verify {how}: reported green",
                f"verify {how}: state",
            )
            for how in ("cancel", "host-kill")
        },
    }.items()
}


@dataclass(frozen=True)
class Settings:
    seed: int
    server_kills: int
    host_kills: int
    leftover_rounds: int
    fuzzed_calls: int
    regex_calls: int
    writers: int
    scene_calls: int
    verify: tuple[str, ...]
    """How verify chains are stopped mid-rung: `cancel`, `host-kill`."""
    fifos: int = 40
    """FIFOs in the special files scenario (issue 23: about 40 wedged everything)."""

    @classmethod
    def short(cls, seed: int = 12) -> Settings:
        return cls(seed, 1, 1, 3, 60, 6, 2, 40, ("cancel",), fifos=12)

    @classmethod
    def long(cls, seed: int = 12) -> Settings:
        return cls(seed, 20, 20, 20, 1000, 40, 8, 200, ("cancel", "host-kill"), fifos=60)


Scenario = Callable[[Path, dict[str, str], random.Random], Awaitable[dict[str, Any]]]


def scenarios(s: Settings, home: Path) -> list[tuple[str, Scenario]]:
    """In order, the quick ones first (a long run cut short still has their figures). The
    spool budget scenario (bytes kept within the per-run and per-workspace
    budget while a writer goes on, omitted count exact) goes after `spool accounting`."""
    found: list[tuple[str, Scenario]] = [
        ("left running", lambda p, e, r: inproc.leftovers(p, r, s.leftover_rounds)),
        ("fuzzed tools", lambda p, e, r: fuzz.fuzz_tools(p, r, s.fuzzed_calls)),
        ("catastrophic regex", lambda p, e, r: inproc.catastrophic_regex(p, r, s.regex_calls)),
        ("secrets at rest", lambda p, e, r: inproc.secrets_at_rest(p, home, 5)),
        ("special files", lambda p, e, r: special.special_files(p, r, s.fifos)),
        ("spool accounting", lambda p, e, r: inproc.spool_accounting(p, r, 3)),
        ("scene under load", lambda p, e, r: inproc.scene_under_load(p, s.writers, s.scene_calls)),
        ("host kills", lambda p, e, r: kills.host_kills(p, e, r, s.host_kills)),
        ("server kills", lambda p, e, r: kills.server_kills(p, e, r, s.server_kills)),
    ]
    for how in s.verify:
        found.append((f"verify {how}", _verify_scenario(how)))
    return found


def _verify_scenario(how: str) -> Scenario:
    async def scenario(project: Path, env: dict[str, str], rng: random.Random) -> dict[str, Any]:
        return await kills.verify_killed_mid_rung(project, env, how)

    return scenario


@dataclass
class Outcome:
    figures: dict[str, dict[str, Any]]
    seconds: dict[str, float]

    def failures(self) -> list[str]:
        """Each must-be-zero figure that is not, each error, and each figure missing from or
        unknown to a scenario's `FIGURES`."""
        bad = []
        for name, figures in self.figures.items():
            wanted = FIGURES.get(name)
            if wanted is None:
                bad.append(f"{name}: a scenario FIGURES does not list")
            elif "error" not in figures:
                bad += [f"{name}: {key} missing" for key in sorted(wanted - figures.keys())]
                bad += [f"{name}: {key} not in FIGURES" for key in sorted(figures.keys() - wanted)]
            for key, value in figures.items():
                if key == "error" or (key in MUST_BE_ZERO and value != 0):
                    bad.append(f"{name}: {key} = {value}")
        return bad


async def run(
    settings: Settings, workdir: Path, progress: Callable[[str, dict[str, Any]], None] | None = None
) -> Outcome:
    """Every scenario, each on its own project under `workdir` (HABITAT_HOME must be set);
    `progress` hears each scenario's figures as it ends (a long run's partial results)."""
    home = Path(os.environ["HABITAT_HOME"])
    env = fuzz.environment(home)
    outcome = Outcome({}, {})
    for n, (name, scenario) in enumerate(scenarios(settings, home)):
        project = workdir / f"p{n}"
        project.mkdir(parents=True)
        (project / ".git").mkdir()
        started = time.monotonic()
        rng = random.Random(f"{settings.seed}-{name}")
        try:
            outcome.figures[name] = await scenario(project, env, rng)
        except Exception as exc:  # a scenario that breaks is a failed figure, not a lost run
            outcome.figures[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        outcome.seconds[name] = round(time.monotonic() - started, 1)
        if progress is not None:
            progress(name, outcome.figures[name])
    return outcome


def _progress(name: str, figures: dict[str, Any]) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {figures}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--short", action="store_true", help="the version `make test` runs")
    args = parser.parse_args()
    settings = (Settings.short if args.short else Settings.long)(args.seed)
    os.environ["HABITAT_HOME"] = tempfile.mkdtemp(prefix="gauntlet-home-")
    with tempfile.TemporaryDirectory(prefix="gauntlet-") as workdir:
        outcome = anyio.run(run, settings, Path(workdir), _progress)
    rows = [
        [name, key, str(value), f"{outcome.seconds[name]:.1f}"]
        for name, figures in outcome.figures.items()
        for key, value in figures.items()
    ]
    kind = "short" if args.short else "long"
    print_table(f"gauntlet ({kind}, seed {args.seed})", ["scenario", "figure", "value", "s"], rows)
    failures = outcome.failures()
    path = write_json(
        f"gauntlet-{kind}",
        {
            "settings": settings.__dict__,
            "figures": outcome.figures,
            "seconds": outcome.seconds,
            "failures": failures,
        },
    )
    for failure in failures:
        print(f"FAIL {failure}")
    verdict = "all zero figures hold" if not failures else f"{len(failures)} failed"
    print(f"seed {args.seed}, {kind}: {verdict} (JSON: {path})")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
