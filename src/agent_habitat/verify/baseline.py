"""Which findings the change introduced: compare a tool's findings with the same tool's on
the snapshot's base (HEAD), and keep base results in a cache in the workspace state folder.

A finding matches one at HEAD for the same file and tool, one to one, in three passes:

1. the same code, message and text of its source line, wherever the line is now, so code
   that merely moved still matches;
2. the same code and message on the line it maps to through the diff of HEAD's version of
   the file against the current one (an edited line maps to the line it replaced);
3. the same code on that mapped line: a line that was already too long and stays too long
   after a one-word edit has a new message and a new text, but no new finding. Not for a
   finding whose code names no kind of problem (a compiler's `compile`, which every
   Go build error has): `code_alone` says which codes may match alone; there another
   error on HEAD's broken line is a different error, not the same one.

A finding is new only if its code is new on its line. A copy of a pre-existing finding on a
new line is new.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..regular import read_regular
from ..workspace import write_private
from .line_map import line_map
from .models import Diagnostic

__all__ = [
    "BaseResult",
    "BaselineCache",
    "fingerprint",
    "mark_preexisting",
    "new_whatever_head_has",
    "summarize",
]

Key = tuple[str, str, str, str, str]
# Messages that name a line ("defined on line 12") would stop matching once code moves.
_LINE_REF = re.compile(r"\bline \d+\b")


class BaseResult(BaseModel):
    """What the tool found on HEAD (a cache entry)."""

    findings: list[Diagnostic]
    exit_code: int | None = None


def _line_text(lines: Sequence[str] | None, line: int | None) -> str:
    if lines is None or line is None or not 0 < line <= len(lines):
        return ""
    return lines[line - 1].strip()


def _message(diag: Diagnostic) -> str:
    return _LINE_REF.sub("line ?", diag.message)


def _key(diag: Diagnostic, lines: Sequence[str] | None) -> Key:
    return (
        diag.file or "",
        diag.source,
        diag.code or "",
        _message(diag),
        _line_text(lines, diag.line),
    )


class _Lines:
    """Each file's line map, computed once and only for files with findings."""

    def __init__(
        self,
        current: Callable[[str], Sequence[str] | None],
        base: Callable[[str], Sequence[str] | None],
    ) -> None:
        self._current, self._base = current, base
        self._maps: dict[str, dict[int, int]] = {}

    def at_head(self, diag: Diagnostic) -> int | None:
        if diag.file is None or diag.line is None:
            return None
        if diag.file not in self._maps:
            old, new = self._base(diag.file), self._current(diag.file)
            self._maps[diag.file] = {} if old is None or new is None else line_map(old, new)
        return self._maps[diag.file].get(diag.line)


# What each pass compares, from the strictest: the whole key where the line maps; the whole
# key anywhere (moved code); file, tool, code and message where it maps; file, tool and code
# where it maps.
_PASSES: tuple[tuple[int, bool], ...] = ((5, True), (5, False), (4, True), (3, True))


def mark_preexisting(
    current: Iterable[Diagnostic],
    base: Iterable[Diagnostic],
    current_lines: Callable[[str], Sequence[str] | None],
    base_lines: Callable[[str], Sequence[str] | None],
    code_alone: Callable[[Diagnostic], bool] | None = None,
) -> list[Diagnostic]:
    """`current` with `preexisting` set where the same finding exists in `base` (see the
    module's docstring); new ones first, then the pre-existing ones, each group in the
    tool's order. `code_alone` (default: every finding) says which findings the third pass
    may match by their code alone."""
    findings = list(current)
    before = list(base)
    lines = _Lines(current_lines, base_lines)
    keys = [_key(d, current_lines(d.file) if d.file else None) for d in findings]
    places = [lines.at_head(d) for d in findings]
    base_keys = [_key(d, base_lines(d.file) if d.file else None) for d in before]
    free = [True] * len(before)
    old = [False] * len(findings)
    errors_first = sorted(range(len(findings)), key=lambda i: findings[i].severity != "error")
    for width, placed in _PASSES:
        index: dict[tuple[object, ...], list[int]] = defaultdict(list)
        for j, key in enumerate(base_keys):
            if free[j]:
                index[(*key[:width], before[j].line if placed else None)].append(j)
        for i in errors_first:
            if old[i] or (placed and places[i] is None):
                continue
            if width < 4 and code_alone is not None and not code_alone(findings[i]):
                continue
            candidates = index.get((*keys[i][:width], places[i] if placed else None))
            if candidates:
                # The same severity first: a lint one unit warns of and another denies
                # (`#![cfg_attr(test, deny(warnings))]`) is a warning and an error of one
                # line; HEAD's error taken by the warning left the error new (unicase 2.8.1).
                same = [c for c in candidates if before[c].severity == findings[i].severity]
                pick = (same or candidates)[0]
                candidates.remove(pick)
                free[pick] = False
                old[i] = True
    _notes_follow_their_finding(findings, old)
    new_ones = [
        d.model_copy(update={"preexisting": False})
        for d, o in zip(findings, old, strict=True)
        if not o
    ]
    old_ones = [
        d.model_copy(update={"preexisting": True}) for d, o in zip(findings, old, strict=True) if o
    ]
    return new_ones + old_ones


def new_whatever_head_has(
    current: Iterable[Diagnostic],
    current_lines: Callable[[str], Sequence[str] | None],
    base_lines: Callable[[str], Sequence[str] | None],
    touched: Collection[str],
) -> list[Diagnostic]:
    """The findings of `current` that `mark_preexisting` leaves new whatever HEAD's findings
    are: each in a file the change touched (`touched`: the project's own, relative paths),
    on a line the change added (no line of HEAD's version maps to it, so the passes that
    follow the line map have nothing to compare with) whose text HEAD's version of its file
    does not have at all (so no finding there has that line's text). A finding HEAD's run
    would show cannot match it; HEAD's run need not be waited for to call it new."""
    lines = _Lines(current_lines, base_lines)
    out: list[Diagnostic] = []
    for diag in current:
        if diag.file is None or diag.line is None or diag.file not in touched:
            continue
        now, then = current_lines(diag.file), base_lines(diag.file)
        text = _line_text(now, diag.line)
        if not text or lines.at_head(diag) is not None:
            continue
        if then is None or text not in {line.strip() for line in then}:
            out.append(diag.model_copy(update={"preexisting": False}))
    return out


def _notes_follow_their_finding(findings: Sequence[Diagnostic], old: list[bool]) -> None:
    """A note is said of the finding on its line (mypy's "See https://…" under a missing
    import): pre-existing when every finding there is, new when one of them is. A tool
    prints some notes once per run, so HEAD's run may not have it to match."""
    owners: dict[tuple[str | None, int | None], list[bool]] = defaultdict(list)
    for d, o in zip(findings, old, strict=True):
        if d.severity != "note":
            owners[(d.file, d.line)].append(o)
    for i, d in enumerate(findings):
        there = owners.get((d.file, d.line))
        if d.severity == "note" and there:
            old[i] = all(there)


def summarize(diagnostics: Sequence[Diagnostic]) -> tuple[int, int]:
    """(new, pre-existing) counts of error-severity findings."""
    errors = [d for d in diagnostics if d.severity == "error"]
    old = sum(1 for d in errors if d.preexisting)
    return len(errors) - old, old


def fingerprint(*parts: str | bytes | Path | None) -> str:
    """A stable hash of a tool's configuration: argv pieces, versions, config files (a Path
    contributes its content, or that it is absent)."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            try:
                data = read_regular(part)
            except OSError:
                data = b"<absent>"
            digest.update(str(part).encode() + b"\0" + data)
        elif isinstance(part, bytes):
            digest.update(part)
        else:
            digest.update(str(part).encode("utf-8", "surrogateescape"))
        digest.update(b"\x1e")
    return digest.hexdigest()


class BaselineCache:
    """Base findings on disk, one JSON file per key; a corrupt entry is a miss."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> BaseResult | None:
        try:
            return BaseResult.model_validate_json(self._path(key).read_bytes())
        except (OSError, ValidationError, json.JSONDecodeError):
            return None

    def put(self, key: str, result: BaseResult) -> None:
        path = self._path(key)
        write_private(path, result.model_dump_json())  # whole: no reader sees half of it
