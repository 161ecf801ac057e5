"""Where a line of HEAD's version of a file is now: the map a finding follows through an edit.

The diff is patience-style: lines the two versions share once each anchor it (their longest
increasing run), the gaps between anchors are solved the same way, and only a gap with no
such line falls back to difflib, which is then small. difflib alone is quadratic in the
duplicate lines of a long file (blank lines, `return`), and its junk heuristic, which avoids
that, lets an identical line elsewhere anchor the match instead of the line's neighbours.
Lines compare without their indentation, so code wrapped in a new block still maps.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Sequence

__all__ = ["line_map"]

Pair = tuple[int, int]
# Past this many line pairs a gap without anchors uses difflib's junk heuristic after all.
_DIFFLIB_CELLS = 1_000_000


def _anchors(old: Sequence[str], new: Sequence[str], span: tuple[int, int, int, int]) -> list[Pair]:
    olo, ohi, nlo, nhi = span
    in_old = Counter(old[olo:ohi])
    in_new = Counter(new[nlo:nhi])
    where = {new[j]: j for j in range(nlo, nhi) if in_new[new[j]] == 1}
    unique = [
        (i, where[old[i]]) for i in range(olo, ohi) if in_old[old[i]] == 1 and old[i] in where
    ]
    # Longest run increasing in both (patience sorting, with back links).
    tops: list[int] = []
    top_at: list[int] = []
    back: list[int] = [-1] * len(unique)
    for k, (_, j) in enumerate(unique):
        pile = bisect.bisect_left(tops, j)
        if pile == len(tops):
            tops.append(j)
            top_at.append(k)
        else:
            tops[pile] = j
            top_at[pile] = k
        back[k] = top_at[pile - 1] if pile else -1
    run: list[Pair] = []
    k = top_at[-1] if top_at else -1
    while k >= 0:
        run.append(unique[k])
        k = back[k]
    return run[::-1]


def _equal_pairs(old: Sequence[str], new: Sequence[str]) -> list[Pair]:
    pairs: list[Pair] = []
    # A work list, not recursion: a long file with many anchors would nest deeply.
    work: list[tuple[int, int, int, int] | Pair] = [(0, len(old), 0, len(new))]
    while work:
        item = work.pop()
        if len(item) == 2:
            pairs.append(item)
            continue
        olo, ohi, nlo, nhi = item
        while olo < ohi and nlo < nhi and old[olo] == new[nlo]:
            pairs.append((olo, nlo))
            olo, nlo = olo + 1, nlo + 1
        tail: list[Pair] = []
        while olo < ohi and nlo < nhi and old[ohi - 1] == new[nhi - 1]:
            ohi, nhi = ohi - 1, nhi - 1
            tail.append((ohi, nhi))
        later: list[tuple[int, int, int, int] | Pair] = list(tail)  # popped last-first
        if olo < ohi and nlo < nhi:
            anchors = _anchors(old, new, (olo, ohi, nlo, nhi))
            if anchors:
                spans: list[tuple[int, int, int, int] | Pair] = []
                i, j = olo, nlo
                for a, b in anchors:
                    spans += [(i, a, j, b), (a, b)]
                    i, j = a + 1, b + 1
                spans.append((i, ohi, j, nhi))
                later += spans[::-1]
            else:
                big = (ohi - olo) * (nhi - nlo) > _DIFFLIB_CELLS
                matcher = difflib.SequenceMatcher(None, old[olo:ohi], new[nlo:nhi], autojunk=big)
                for a, b, size in matcher.get_matching_blocks():
                    pairs += [(olo + a + k, nlo + b + k) for k in range(size)]
        work += later
    return pairs


def line_map(base: Sequence[str], current: Sequence[str]) -> dict[int, int]:
    """Current line number → the line of `base` it stands for (both 1-based): unchanged
    lines, and the lines of an edited block pairwise. Inserted lines map to none."""
    old = [line.strip() for line in base]
    new = [line.strip() for line in current]
    if old == new:
        return {n: n for n in range(1, len(new) + 1)}
    mapping: dict[int, int] = {}
    i = j = 0
    for a, b in [*_equal_pairs(old, new), (len(old), len(new))]:
        # The gap before an equal pair is an edit: its lines stand for the ones they replaced.
        for k in range(min(a - i, b - j)):
            mapping[j + k + 1] = i + k + 1
        mapping[b + 1] = a + 1
        i, j = a + 1, b + 1
    mapping.pop(len(new) + 1, None)
    return mapping
