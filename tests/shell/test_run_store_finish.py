"""`RunStore.finish`: the end is recorded once, and its caller gets the row as ended."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_habitat.shell.run_store import NewRun, RunStore
from agent_habitat.store import Database


def test_finish_gives_the_row_as_ended_once_and_none_to_a_second_recorder(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "state.db")
    store = RunStore(db)
    new = NewRun(
        tab="main",
        command="echo hi",
        cwd=str(tmp_path),
        shell="/bin/bash",
        background=False,
        interactive=False,
    )
    opened = store.open_run(new, spool_dir=tmp_path / "spool", max_tabs=8, keep=50)
    ended = store.finish(
        opened.run.id,
        "exited",
        exit_code=3,
        signal=None,
        output_bytes=3,
        tab_cwd="/elsewhere",
        ended_at=opened.run.started_at + 1.5,
    )
    assert ended is not None
    assert ended == store.get(opened.run.id)
    assert (ended.state, ended.exit_code, ended.output_bytes) == ("exited", 3, 3)
    assert ended.duration_s(0.0) == 1.5
    assert ended.run_dir == opened.run.run_dir
    tab = store.tab("main")
    assert tab is not None
    assert tab.cwd == "/elsewhere"
    again = store.finish(opened.run.id, "lost", exit_code=None, signal=None, output_bytes=0)
    assert again is None
    assert store.get(opened.run.id) == ended
    db.close()


_STDLIB_CORE = """
import sys
from pathlib import Path
from agent_habitat.shell.run_store import NewRun, RunStore
from agent_habitat.store import Database

root = Path(sys.argv[1])
store = RunStore(Database(root / "state.db"))
new = NewRun(tab="main", command="true", cwd=str(root), shell="/bin/bash",
             background=False, interactive=False)
opened = store.open_run(new, spool_dir=root / "spool", max_tabs=8, keep=50)
ended = store.finish(opened.run.id, "exited", exit_code=0, signal=None, output_bytes=0,
                     ended_at=None, tab_cwd=None, tab_env=None)
assert ended is not None and ended.state == "exited"
print(" ".join(m for m in ("pydantic", "anyio", "asyncio") if m in sys.modules))
"""


def test_the_run_rows_are_written_with_the_standard_library_alone(tmp_path: Path) -> None:
    # The SQL of a run's start and end is the core a CLI path without pydantic and anyio
    # would record through (issue 25): it must not load them itself.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    out = subprocess.run(
        [sys.executable, "-c", _STDLIB_CORE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert out.split() == []
