"""`habitat scene` as a table: one rendering for the scene model, for the fast read of
`state.db` (`cli.scene_fast`) and for the host's JSON answer, so every path prints the same.

It reads the scene through read-only protocols, not the pydantic models, so the fast paths
render without building them, and lays the table out itself (`cli.table`: rich's look
without rich's import). A cwd inside the project shows relative to it (`.`, `src/app`), so
the column says where each tab is instead of repeating the project's path on every row; a
table too wide for the terminal cuts paths from the left and commands from the right.
"""

from __future__ import annotations

import sys

from .table import Column, render_table, terminal_width

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported

__all__ = ["SceneLike", "plain_scene", "print_scene", "shown_cwd"]

_TITLE = "habitat scene"
_COLUMNS = (
    Column("tab"),
    Column("shell"),
    Column("state"),
    Column("cwd", shrink="start"),
    Column("last run", shrink="end"),
)


if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Protocol, TextIO

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


def shown_cwd(cwd: str, root: Path | str | None) -> str:
    """`cwd` relative to the project `root` when it lies inside it (`.` for the root).
    Compared as text, component by component (the scene has no use for `pathlib`)."""
    if root is None:
        return cwd
    top = str(root).rstrip("/") or "/"
    here = cwd.rstrip("/") or "/"
    if here == top:
        return "."
    inside = top if top == "/" else f"{top}/"
    return here[len(inside) :] if here.startswith(inside) else cwd


def _rows(scene: SceneLike, root: Path | str | None) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for tab in scene.tabs:
        last = tab.last_run
        summary = "—"
        if last is not None:
            code = last.exit_code if last.exit_code is not None else last.state
            summary = f"#{last.index} `{last.command[:40]}` → {code} ({last.duration_s:.2f}s)"
        state = f"running (pid {tab.pid})" if tab.state == "running" else tab.state
        rows.append((tab.name, tab.shell, state, shown_cwd(tab.cwd, root), summary))
    return rows


def _caps_line(scene: SceneLike) -> str:
    caps = scene.caps
    return (
        f"{len(scene.tabs)}/{caps.max_tabs} tabs · {caps.history_rows} history "
        f"rows per tab · output cap {caps.output_cap_bytes} B"
    )


def plain_scene(
    scene: SceneLike, width: int, root: Path | str | None = None, *, styled: bool = False
) -> str:
    """The scene's text for a `width`-column terminal (or file)."""
    table = render_table(_COLUMNS, _rows(scene, root), width=width, title=_TITLE, styled=styled)
    caps = _caps_line(scene)
    return table + (f"\x1b[2m{caps}\x1b[0m\n" if styled else f"{caps}\n")


def print_scene(
    scene: SceneLike, root: Path | str | None = None, out: TextIO | None = None
) -> None:
    from .styles import styled

    stream = out or sys.stdout
    stream.write(plain_scene(scene, terminal_width(), root, styled=styled(stream)))
