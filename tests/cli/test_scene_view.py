"""The scene table, laid out without rich: rich's look where it fits, and where it does not,
the start of a path and the end of a command given up, never the column that tells rows
apart."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from agent_habitat.cli.scene_view import plain_scene, print_scene
from agent_habitat.cli.table import cell_width
from agent_habitat.shell import models as m


def _scene(*tabs: m.TabScene) -> m.SceneResult:
    caps = m.Caps(max_tabs=8, history_rows=50, output_cap_bytes=16384, preview_bytes=2048)
    return m.SceneResult(tabs=list(tabs), caps=caps)


def _tab(name: str, cwd: str = "/work/p", command: str | None = "make test") -> m.TabScene:
    last = None
    if command is not None:
        last = m.LastRunSummary(
            index=3, command=command, state="exited", exit_code=0, duration_s=1.234
        )
    return m.TabScene(
        name=name, shell="bash", cwd=cwd, state="idle", pid=None, last_run=last, preview=""
    )


def _rich(scene: m.SceneResult, width: int) -> str:
    """What rich printed for the scene before the CLI laid it out itself."""
    buf = io.StringIO()
    out = Console(file=buf, highlight=False, width=width)
    table = Table("tab", "shell", "state", "cwd", "last run", title="habitat scene")
    for tab in scene.tabs:
        last = tab.last_run
        summary = "—"
        if last is not None:
            code = last.exit_code if last.exit_code is not None else last.state
            summary = f"#{last.index} `{last.command[:40]}` → {code} ({last.duration_s:.2f}s)"
        state = f"running (pid {tab.pid})" if tab.state == "running" else tab.state
        table.add_row(tab.name, tab.shell, state, tab.cwd, summary)
    out.print(table)
    caps = scene.caps
    out.print(
        f"{len(scene.tabs)}/{caps.max_tabs} tabs · {caps.history_rows} history "
        f"rows per tab · output cap {caps.output_cap_bytes} B",
        markup=False,
    )
    return buf.getvalue()


@pytest.mark.parametrize(
    "scene",
    [
        _scene(),
        _scene(_tab("main")),
        _scene(_tab("main", command=None), _tab("a-much-longer-tab.name", "/")),
        _scene(_tab("main", command="pytest -x -q tests/very/long/path/to/a/test_file.py")),
        _scene(
            _tab("x"),
            m.TabScene(
                name="web",
                shell="zsh",
                cwd="/srv/app",
                state="running",
                pid=4242,
                last_run=m.LastRunSummary(
                    index=1, command="npm run dev", state="running", exit_code=None, duration_s=9
                ),
                preview="",
            ),
        ),
    ],
)
@pytest.mark.parametrize("width", [80, 132])
def test_a_table_that_fits_is_what_rich_printed(scene: m.SceneResult, width: int) -> None:
    roomy = plain_scene(scene, 1000)
    assert roomy == _rich(scene, 1000)
    text = plain_scene(scene, width)
    if max(cell_width(line) for line in roomy.splitlines()) <= width:
        assert text == _rich(scene, width)
    else:  # rich folded such a table onto more lines; it is cut to the width instead
        assert all(cell_width(line) <= width for line in text.splitlines())
        assert len(text.splitlines()) == len(roomy.splitlines())


def test_a_cwd_inside_the_project_shows_relative_to_it() -> None:
    scene = _scene(_tab("main", "/work/p"), _tab("web", "/work/p/src/app"), _tab("o", "/etc"))
    text = plain_scene(scene, 120, Path("/work/p"))
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert [row.split("│")[4].strip() for row in rows] == [".", "src/app", "/etc"]


def test_a_table_too_wide_cuts_paths_from_the_left_and_commands_from_the_right() -> None:
    deep = "/home/someone/projects/" + "nested/" * 8
    scene = _scene(
        _tab("main", deep + "alpha", command="pytest " + "x" * 60),
        _tab("web", deep + "beta"),
    )
    text = plain_scene(scene, 80)
    lines = text.splitlines()
    assert all(cell_width(line) <= 80 for line in lines)
    rows = [line for line in lines if line.startswith("│")]
    cwds = [row.split("│")[4].strip() for row in rows]
    # Each row keeps the end of its path (what tells the rows apart), not the same start.
    assert cwds[0].startswith("…")
    assert cwds[0].endswith("alpha")
    assert cwds[1].startswith("…")
    assert cwds[1].endswith("beta")
    assert rows[0].split("│")[5].strip().endswith("…")


def test_wide_characters_count_two_columns() -> None:
    scene = _scene(_tab("main", "/home/josé/日本"))
    lines = plain_scene(scene, 80).splitlines()
    assert len({cell_width(line) for line in lines[1:-1]}) == 1  # every box line equally wide


def test_on_a_terminal_the_header_is_bold_and_the_caps_line_dim() -> None:
    text = plain_scene(_scene(_tab("main")), 80, styled=True)
    assert "\x1b[1mtab" in text
    assert text.splitlines()[-1].startswith("\x1b[2m")
    assert "\x1b" not in plain_scene(_scene(_tab("main")), 80)


def test_print_scene_writes_the_plain_table_off_a_terminal() -> None:
    out = io.StringIO()
    print_scene(_scene(_tab("main")), None, out)
    assert out.getvalue() == _rich(_scene(_tab("main")), 80)
