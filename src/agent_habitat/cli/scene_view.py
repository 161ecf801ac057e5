"""`habitat scene` as a table: one rendering for the scene model and for the fast read of
`state.db` (`cli.scene_fast`), so both paths print the same thing.

It reads the scene through read-only protocols, not the pydantic models, so the fast path
renders without building them. Off a terminal, where rich prints the table without styles,
the same characters are laid out here without importing rich (a test holds the two equal);
a table rich would have to squeeze or cells it would read as markup still go to rich.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["SceneLike", "plain_scene", "print_scene"]

_TITLE = "habitat scene"
_HEADERS = ("tab", "shell", "state", "cwd", "last run")
# Variables that make rich treat a non-terminal as a terminal: then rich renders.
_RICH_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
# Characters one column wide that rich prints as they are; anything else (markup brackets,
# emoji codes, wide or combining characters) is rich's to lay out.
_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
    "!\"#$%&'()*+,-./;<=>?@\\^_`{|}~→—·"
)


class _LastRun(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def command(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def duration_s(self) -> float: ...


class _Tab(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def shell(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def cwd(self) -> str: ...
    @property
    def pid(self) -> int | None: ...
    @property
    def last_run(self) -> _LastRun | None: ...


class _Caps(Protocol):
    @property
    def max_tabs(self) -> int: ...
    @property
    def history_rows(self) -> int: ...
    @property
    def output_cap_bytes(self) -> int: ...


class SceneLike(Protocol):
    """What the table shows of a scene (`shell.models.SceneResult` is one)."""

    @property
    def tabs(self) -> Sequence[_Tab]: ...
    @property
    def caps(self) -> _Caps: ...


def _rows(scene: SceneLike) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for tab in scene.tabs:
        last = tab.last_run
        summary = "—"
        if last is not None:
            code = last.exit_code if last.exit_code is not None else last.state
            summary = f"#{last.index} `{last.command[:40]}` → {code} ({last.duration_s:.2f}s)"
        state = f"running (pid {tab.pid})" if tab.state == "running" else tab.state
        rows.append((tab.name, tab.shell, state, tab.cwd, summary))
    return rows


def _caps_line(scene: SceneLike) -> str:
    caps = scene.caps
    return (
        f"{len(scene.tabs)}/{caps.max_tabs} tabs · {caps.history_rows} history "
        f"rows per tab · output cap {caps.output_cap_bytes} B"
    )


def rich_width() -> int:
    """The width rich gives a console: the first standard stream's terminal, `COLUMNS`, 80."""
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80


def plain_scene(scene: SceneLike, width: int) -> str | None:
    """The text rich prints for the scene on a `width`-column non-terminal, or None when
    only rich can tell (a cell it would fold, mark up or measure otherwise)."""
    rows = _rows(scene)
    cells = [_HEADERS, *rows]
    if any(not set(cell) <= _PLAIN for row in cells for cell in row):
        return None
    widths = [max(len(row[i]) for row in cells) for i in range(len(_HEADERS))]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width or total < len(_TITLE):
        return None

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    def cells_of(row: Sequence[str], bar: str) -> str:
        return bar + bar.join(f" {c.ljust(w)} " for c, w in zip(row, widths, strict=True)) + bar

    pad = total - len(_TITLE)
    out = [" " * (pad // 2) + _TITLE + " " * (pad - pad // 2)]
    out.append(line("┏", "━", "┳", "┓"))
    out.append(cells_of(_HEADERS, "┃"))
    out.append(line("┡", "━", "╇", "┩"))
    out.extend(cells_of(row, "│") for row in rows)
    out.append(line("└", "─", "┴", "┘"))
    out.append(_caps_line(scene))
    return "\n".join(out) + "\n"


def print_scene(scene: SceneLike, console: Console | None = None) -> None:
    if console is None and not sys.stdout.isatty() and not any(v in os.environ for v in _RICH_ENV):
        text = plain_scene(scene, rich_width())
        if text is not None:
            sys.stdout.write(text)
            return
    from rich.console import Console
    from rich.table import Table

    out = console or Console(highlight=False)
    table = Table(*_HEADERS, title=_TITLE)
    for row in _rows(scene):
        table.add_row(*row)
    out.print(table)
    out.print(f"[dim]{_caps_line(scene)}[/dim]")
