"""The text side of an edit: decoding, line-ending styles, and locating `old` exactly.

Edits are matched against the file with its line endings normalized to LF, but applied
to the original text, so a CRLF file keeps CRLF everywhere (and a file with mixed endings
keeps the endings of every line the edit did not touch).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from ..errors import HabitatError

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    # Annotations only: `rules --write` decodes and restyles a file without the models.
    from .models import Edit, LineEndings

__all__ = [
    "BinaryFileError",
    "EditConflictError",
    "apply_edits",
    "decode_text",
    "in_style",
    "line_endings",
]

# NUL bytes in the first block mark a binary file, as git and grep decide.
_SNIFF_BYTES = 8192
# Line numbers listed in a conflict message; more are counted, not listed.
_MAX_LINES_LISTED = 20


class BinaryFileError(HabitatError):
    """The file is not UTF-8 text; the edit verbs never touch it."""


class EditConflictError(HabitatError):
    """An edit's `old` (or `anchor`) is missing or ambiguous; nothing was written."""


def decode_text(data: bytes, label: str) -> str:
    if b"\0" in data[:_SNIFF_BYTES]:
        raise BinaryFileError(f"{label} is a binary file; file_write/file_edit change text only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BinaryFileError(
            f"{label} is not UTF-8 text (byte {exc.start}); file_write/file_edit change UTF-8 "
            "text only"
        ) from exc


def line_endings(text: str) -> LineEndings:
    """The file's style: CRLF when most of its line breaks are CRLF."""
    crlf = text.count("\r\n")
    return "crlf" if crlf > text.count("\n") - crlf else "lf"


def in_style(text: str, style: LineEndings) -> str:
    """`text` (any endings) with every line break in `style`."""
    lf = text.replace("\r\n", "\n")
    return lf.replace("\n", "\r\n") if style == "crlf" else lf


def apply_edits(original: str, edits: Sequence[Edit], label: str) -> str:
    """`original` with every edit applied in order; EditConflictError names the first that can't."""
    style = line_endings(original)
    text = original
    for number, edit in enumerate(edits, start=1):
        where = f"edit {number} of {len(edits)} on {label}" if len(edits) > 1 else label
        old = edit.old.replace("\r\n", "\n")
        if old == edit.new.replace("\r\n", "\n"):
            raise EditConflictError(f"{where}: `old` and `new` are the same; nothing to change")
        normalized, removed_crs = _normalize(text)
        start = _locate(normalized, old, edit.anchor, where)
        end = start + len(old)
        # Map the span back to the original text: each CR dropped before a position shifts it.
        o_start = start + bisect_left(removed_crs, start)
        o_end = end + bisect_left(removed_crs, end)
        text = text[:o_start] + in_style(edit.new, style) + text[o_end:]
    return text


def _normalize(text: str) -> tuple[str, list[int]]:
    """LF-only text and the positions (in it) of the line breaks that were CRLF."""
    removed: list[int] = []
    parts = text.split("\r\n")
    position = 0
    for part in parts[:-1]:
        position += len(part)
        removed.append(position)
        position += 1
    return "\n".join(parts), removed


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    start = text.find(needle)
    while start != -1:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _lines(text: str, positions: Sequence[int]) -> str:
    numbers = [str(_line_of(text, p)) for p in positions[:_MAX_LINES_LISTED]]
    more = len(positions) - len(numbers)
    return ", ".join(numbers) + (f" and {more} more" if more > 0 else "")


def _locate(text: str, old: str, anchor: str | None, where: str) -> int:
    found = _occurrences(text, old)
    if anchor is None:
        if len(found) == 1:
            return found[0]
        if not found:
            raise EditConflictError(f"{where}: `old` not found{_near_misses(text, old)}")
        raise EditConflictError(
            f"{where}: `old` occurs {len(found)} times, at lines {_lines(text, found)}; include "
            "more surrounding text in `old`, or give an `anchor` that occurs once, at or before "
            "the occurrence you mean"
        )
    anchors = _occurrences(text, anchor.replace("\r\n", "\n"))
    if not anchors:
        raise EditConflictError(f"{where}: `anchor` not found")
    if len(anchors) > 1:
        raise EditConflictError(
            f"{where}: `anchor` occurs {len(anchors)} times, at lines {_lines(text, anchors)}; "
            "it must occur exactly once: make it longer"
        )
    after = [p for p in found if p >= anchors[0]]
    if after:
        return after[0]
    anchor_line = _line_of(text, anchors[0])
    if not found:
        raise EditConflictError(
            f"{where}: `old` not found (anchor at line {anchor_line}){_near_misses(text, old)}"
        )
    raise EditConflictError(
        f"{where}: `old` does not occur at or after the anchor (line {anchor_line}); it occurs "
        f"at lines {_lines(text, found)}"
    )


_NOWHERE = (
    ", nor its first line: read the file again (it may have changed since you saw it) and "
    "copy `old` from it exactly"
)


def _near_misses(text: str, old: str) -> str:
    """Lines holding the first line of `old` without its indentation: likely whitespace slips."""
    first = next((line.strip() for line in old.split("\n") if line.strip()), "")
    if not first:
        return _NOWHERE
    hits: list[int] = []
    position = 0
    for line in text.split("\n"):
        if first in line:
            hits.append(position)
        position += len(line) + 1
    if not hits:
        return _NOWHERE
    return (
        f"; its first line ({first[:60]!r}, ignoring indentation) is at lines "
        f"{_lines(text, hits)}: copy `old` exactly, whitespace included"
    )
