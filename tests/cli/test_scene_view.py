"""The scene table laid out without rich is, character for character, what rich prints."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agent_habitat.cli.scene_view import plain_scene, print_scene
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
    buf = io.StringIO()
    print_scene(scene, Console(file=buf, highlight=False, width=width))
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
def test_the_plain_table_is_what_rich_prints(scene: m.SceneResult, width: int) -> None:
    roomy = plain_scene(scene, 1000)
    assert roomy is not None
    assert roomy == _rich(scene, 1000)
    plain = plain_scene(scene, width)
    if plain is None:  # too wide for `width`: rich squeezes it, as it shows
        assert _rich(scene, width) != roomy
    else:
        assert plain == _rich(scene, width)


def test_what_rich_would_squeeze_or_mark_up_is_left_to_rich() -> None:
    assert plain_scene(_scene(_tab("main", cwd="/" + "d" * 90)), 80) is None
    assert plain_scene(_scene(_tab("main", command="echo [bold]x")), 80) is None
    assert plain_scene(_scene(_tab("main", command="echo :smile:")), 80) is None
    assert plain_scene(_scene(_tab("main", cwd="/home/josé")), 80) is None
