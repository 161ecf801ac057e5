"""The ladder harness's figures from its rows: the miss rate's upper bound, selection and
wall tails, and the targets of issue 22 with their verdicts."""

from __future__ import annotations

import math
import statistics
from typing import Any

__all__ = ["miss_rate_upper", "tail_row", "tails", "targets", "verdicts"]


def _binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def miss_rate_upper(misses: int, trials: int, confidence: float = 0.95) -> float:
    """Clopper–Pearson one-sided upper bound of the miss rate (`misses` of `trials`
    mutations that the full suite caught); with 0 misses, 1 - (1 - c)^(1/n) (≈ 3/n)."""
    if trials == 0:
        return 1.0
    if misses >= trials:
        return 1.0
    lo, hi = misses / trials, 1.0
    for _ in range(60):  # bisect P(X ≤ misses | p) = 1 - confidence
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _binom_cdf(misses, trials, mid) > 1 - confidence else (lo, mid)
    return hi


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)] if ordered else 0.0


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": 0.0, "p90": 0.0, "n": 0}
    return {"median": statistics.median(values), "p90": _p90(values), "n": len(values)}


def tails(rows: list[dict[str, Any]], comments: list[float]) -> dict[str, Any]:
    """From the second edit on: selection ratio to testmon, walls, the comment-only edit."""
    ratios = [r["ours_selected"] / max(r["testmon_selected"], 1) for r in rows]
    caught = sum(r["full_caught"] for r in rows)
    misses = sum(r["miss"] for r in rows)
    return {
        "edits": len(rows),
        "caught": caught,
        "misses": misses,
        "miss_rate_upper_95": round(miss_rate_upper(misses, caught), 3),
        "false_reds": sum(r["false_red"] for r in rows),
        "oneshot_disagreements": sum(
            r.get("oneshot_state") not in (None, r["ladder_state"]) for r in rows
        ),
        "selected_ours": _spread([float(r["ours_selected"]) for r in rows]),
        "selected_testmon": _spread([float(r["testmon_selected"]) for r in rows]),
        "ratio": {**_spread(ratios), "max": max(ratios, default=0.0)},
        "over_2x": sum(x > 2 for x in ratios),
        "wall_host": _spread([r["ladder_wall_s"] for r in rows]),
        "wall_oneshot": _spread([r["oneshot_wall_s"] for r in rows if "oneshot_wall_s" in r]),
        "wall_full": _spread([r["full_s"] for r in rows]),
        "wall_testmon": _spread([r["testmon_s"] for r in rows]),
        "comment_edit": {**_spread(comments), "max": max(comments, default=0.0)},
    }


def targets(t: dict[str, Any]) -> list[tuple[str, bool | None]]:
    """Issue 22's targets; None where nothing was measured (never a pass)."""
    host, full, tm = (t[k]["median"] for k in ("wall_host", "wall_full", "wall_testmon"))
    one = t["wall_oneshot"]["median"] if t["wall_oneshot"]["n"] else None
    comment = t["comment_edit"]["median"] if t["comment_edit"]["n"] else None
    edits = t["edits"] > 0
    return [
        ("misses 0", t["misses"] == 0 if edits else None),
        ("false reds 0", t["false_reds"] == 0 if edits else None),
        ("selected ≤ 2× testmon (median)", t["ratio"]["median"] <= 2 if edits else None),
        ("host ≤ testmon + 0.3 s", host <= tm + 0.3 if edits else None),
        ("host ≤ full", host <= full if edits else None),
        ("one-shot ≤ full + 1 s", None if one is None else one <= full + 1),
        ("comment edit ≤ 300 ms (host)", None if comment is None else comment <= 0.3),
    ]


def verdicts(t: dict[str, Any]) -> str:
    mark = {True: "✓", False: "✗", None: "not measured"}
    return ", ".join(f"{name} {mark[ok]}" for name, ok in targets(t))


def tail_row(project: str, t: dict[str, Any]) -> list[str]:
    def w(key: str) -> str:
        x = t[key]
        return f"{x['median']:.2f} ({x['p90']:.2f})" if x["n"] else "-"

    so, st, ratio, c = t["selected_ours"], t["selected_testmon"], t["ratio"], t["comment_edit"]
    return [
        project,
        f"{t['edits']} ({t['caught']})",
        f"{t['misses']} (≤ {t['miss_rate_upper_95']:.1%}) / {t['false_reds']}",
        f"{so['median']:g}, {so['p90']:g} / {st['median']:g}, {st['p90']:g}",
        f"{ratio['median']:.2f} / {ratio['p90']:.2f} / {ratio['max']:.2f} / {t['over_2x']}",
        " / ".join(w(k) for k in ("wall_host", "wall_oneshot", "wall_full", "wall_testmon")),
        f"{c['median']:.2f} / {c['max']:.2f} ({c['n']})" if c["n"] else "-",
        verdicts(t),
    ]
