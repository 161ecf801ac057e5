"""Which findings the change introduced: compare a tool's findings with the same tool's on
the snapshot's base (HEAD), and keep base results in a cache in the workspace state folder.

A finding matches one at HEAD for the same file by (tool, code, message, text of its source
line), never by line number, so code that moved still matches. Matching is one to one: a
copy of a pre-existing finding on a new line is new.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..workspace import write_private
from .models import Diagnostic

__all__ = ["BaseResult", "BaselineCache", "fingerprint", "mark_preexisting", "summarize"]

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


def _key(diag: Diagnostic, lines: Sequence[str] | None) -> Key:
    message = _LINE_REF.sub("line ?", diag.message)
    return (diag.file or "", diag.source, diag.code or "", message, _line_text(lines, diag.line))


def mark_preexisting(
    current: Iterable[Diagnostic],
    base: Iterable[Diagnostic],
    current_lines: Callable[[str], Sequence[str] | None],
    base_lines: Callable[[str], Sequence[str] | None],
) -> list[Diagnostic]:
    """`current` with `preexisting` set where the same finding exists in `base`; new ones
    first, then the pre-existing ones, each group in the tool's order."""
    remaining = Counter(_key(d, base_lines(d.file) if d.file else None) for d in base)
    new: list[Diagnostic] = []
    old: list[Diagnostic] = []
    for diag in current:
        key = _key(diag, current_lines(diag.file) if diag.file else None)
        if remaining[key] > 0:
            remaining[key] -= 1
            old.append(diag.model_copy(update={"preexisting": True}))
        else:
            new.append(diag.model_copy(update={"preexisting": False}))
    return new + old


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
                data = part.read_bytes()
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
