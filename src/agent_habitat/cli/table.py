"""A table as the CLI prints it, laid out with the standard library.

The look is rich's default table (heavy head, light body, a title centred above), which the
CLI used to print through rich; laying it out here keeps rich's import (a tenth of a second)
off every `habitat scene` and `habitat history`, and lets a table that is too wide for the
terminal shrink the way a person wants: a path column loses its start (`…/src/pkg`, the end
is what tells rows apart), a text column its end (`make -j2 te…`). Cell widths count
terminal columns (a wide character is two, a combining one none).
"""

from __future__ import annotations

import os
import unicodedata

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

__all__ = ["Column", "cell_width", "render_table", "terminal_width"]

_ELLIPSIS = "…"
_MIN_CELL = 4
"""A shrunk column keeps at least this many columns (or its header's width if wider)."""


class Column:
    """A column: its header, and how it gives up width when the table is too wide: not at
    all, losing the end of its cells, or losing their start (paths)."""

    __slots__ = ("header", "shrink")

    def __init__(self, header: str, shrink: Literal["none", "end", "start"] = "none") -> None:
        self.header = header
        self.shrink = shrink


def cell_width(text: str) -> int:
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return width


def terminal_width() -> int:
    """The width to lay out for: `COLUMNS`, else the first standard stream's terminal, 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit() and int(columns) > 0:
        return int(columns)
    for fd in (1, 2, 0):
        try:
            return os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def _cut(text: str, width: int, where: str) -> str:
    if cell_width(text) <= width:
        return text
    keep = max(0, width - 1)
    chars = list(text)
    if where == "start":
        out: list[str] = []
        used = 0
        for char in reversed(chars):
            w = cell_width(char)
            if used + w > keep:
                break
            out.append(char)
            used += w
        return _ELLIPSIS + "".join(reversed(out))
    kept = []
    used = 0
    for char in chars:
        w = cell_width(char)
        if used + w > keep:
            break
        kept.append(char)
        used += w
    return "".join(kept) + _ELLIPSIS


def _fit(columns: Sequence[Column], widths: list[int], width: int) -> list[int]:
    """Column widths that fit `width` (box and padding included), taken from the widest
    shrinkable column first; as they were when nothing can give more."""
    widths = list(widths)
    floor = [max(_MIN_CELL, cell_width(c.header)) for c in columns]
    while sum(widths) + 3 * len(widths) + 1 > width:
        candidates = [
            i for i, c in enumerate(columns) if c.shrink != "none" and widths[i] > floor[i]
        ]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def render_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    width: int,
    title: str | None = None,
    styled: bool = False,
) -> str:
    """The table's text, each line ending in a newline; `styled` adds a terminal's bold
    headers and italic title."""
    headers = [c.header for c in columns]
    natural = [max(cell_width(row[i]) for row in (headers, *rows)) for i in range(len(columns))]
    widths = _fit(columns, natural, width)
    cells = [
        [_cut(cell, widths[i], columns[i].shrink) for i, cell in enumerate(row)] for row in rows
    ]

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    def cells_of(row: Sequence[str], bar: str, bold: bool = False) -> str:
        parts = []
        for cell, w in zip(row, widths, strict=True):
            padded = cell + " " * (w - cell_width(cell))
            parts.append(f" \x1b[1m{padded}\x1b[0m " if bold else f" {padded} ")
        return bar + bar.join(parts) + bar

    total = sum(widths) + 3 * len(widths) + 1
    out = []
    if title is not None:
        pad = max(0, total - cell_width(title))
        shown = f"\x1b[3m{title}\x1b[0m" if styled else title
        out.append(" " * (pad // 2) + shown + " " * (pad - pad // 2))
    out.append(line("┏", "━", "┳", "┓"))
    out.append(cells_of(headers, "┃", bold=styled))
    out.append(line("┡", "━", "╇", "┩"))
    out.extend(cells_of(row, "│") for row in cells)
    out.append(line("└", "─", "┴", "┘"))
    return "".join(f"{text}\n" for text in out)
