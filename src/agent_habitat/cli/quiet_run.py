"""`habitat run COMMAND` with no host, started in this process with the standard library.

When no host serves the workspace and its state needs nothing done (`cli.quiet_state`), a
foreground run of a command line with no other flag than `--tab` and `--json` is started
and, when it is over within its first moment, recorded by `shell.quiet_run`: no pydantic,
anyio or habitat. Its output is copied from its spool and its result shown by
`cli.shell_views`, as the full path shows it (`cli.shell_cmds`): the same text, `--json`
and exit code, the same rows, files and events (tests keep them equal). A run that goes on
past that moment (or ends in a way that path does not record) is handed to the full path,
which follows it from there (`shell_cmds.handed_run`). Anything else takes the full path
from the start: other flags, a command the model would refuse, a tab limit, a busy tab.
"""

from __future__ import annotations

import sys

from .quiet_verbs import tab_name
from .shell_views import VIEWS, emit_json_data
from .verb_argv import VerbCall

__all__ = ["quiet_close", "quiet_rerun", "quiet_run"]

_TAKEN = frozenset({"command", "tab", "background", "interactive"})
"""The run's fields this path serves (`background` and `interactive` false)."""
_MAX_ARG_BYTES = 128 * 1024 - 1  # `limits.MAX_ARG_BYTES`
_INDEX_MAX = 2**63 - 1  # `limits.INDEX_MAX`


def _command(value: object) -> str | None:
    """The command line if `shell.models.RunArgs` takes it (`limits.check_os_text`, not
    blank: `Shell.run`'s refusal), else None (the full path words the refusal)."""
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        return None
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return None
    return value if size <= _MAX_ARG_BYTES else None


def quiet_run(call: VerbCall, root: str) -> int | None:
    """The exit code of `habitat run` answered in this process (no host serves the workspace
    at `root`), or None when the full path must answer it."""
    body = call.body
    if set(body) - _TAKEN or body.get("background") or body.get("interactive"):
        return None
    command, tab = _command(body.get("command")), body.get("tab", "main")
    if command is None or not tab_name(tab):
        return None
    from .quiet_state import quiet_state

    conn = quiet_state(root)
    if conn is None:
        return None
    conn.close()
    from pathlib import Path

    from ..shell.quiet_run import Caps, Handed
    from ..shell.quiet_run import quiet_run as start
    from ..workspace import Workspace, scm_root
    from .scene_fast import SHELL_CONFIG_DEFAULTS as DEFAULTS

    workspace = Workspace.for_project(Path(root))
    project = workspace.root if call.project is not None else scm_root(Path(root))
    caps = Caps(
        max_tabs=int(DEFAULTS["max_tabs"]),
        history_rows=int(DEFAULTS["history_rows"]),
        output_cap_bytes=int(DEFAULTS["output_cap_bytes"]),
        spool_run_budget_bytes=int(DEFAULTS["spool_run_budget_bytes"]),
        spool_workspace_budget_bytes=int(DEFAULTS["spool_workspace_budget_bytes"]),
    )
    outcome = start(
        workspace.db_path,
        label=workspace.label,
        spool_dir=workspace.spool_dir,
        project_root=project.resolve() if project is not None else None,
        command=command,
        tab=tab,
        caps=caps,
    )
    if outcome is None:
        return None
    if isinstance(outcome, Handed):
        from . import _no_pydantic_plugins

        _no_pydantic_plugins()  # as `main` does before the full path
        from .shell_cmds import handed_run

        return handed_run(call, outcome)
    view = VIEWS["run"]
    if call.json:
        emit_json_data(outcome)
    else:
        _copy_spool(str(outcome["spool"]))
        view.show(outcome, True, root)
    sys.stdout.flush()
    from .quiet_verbs import start_host

    start_host(root)
    return view.exit_code(outcome)


def quiet_rerun(call: VerbCall, root: str) -> int | None:
    """`habitat rerun` as `quiet_run` answers `run`: a history entry's command run again in
    its tab, when the full path would run it with the tab's own shell (`Shell.rerun` passes
    the entry's), or None when the full path must answer."""
    body = call.body
    tab, index = body.get("tab", "main"), body.get("index")
    if set(body) - {"tab", "index", "background"} or body.get("background") or not tab_name(tab):
        return None
    if index is not None and (type(index) is not int or not 1 <= index <= _INDEX_MAX):
        return None
    from .quiet_state import quiet_state

    conn = quiet_state(root)
    if conn is None:
        return None
    try:
        row = conn.execute("SELECT shell FROM tabs WHERE name = ?", (tab,)).fetchone()
        query = "SELECT command, shell FROM runs WHERE tab = ?"
        if index is None:
            old = conn.execute(f"{query} ORDER BY idx DESC LIMIT 1", (tab,)).fetchone()
        else:
            old = conn.execute(f"{query} AND idx = ?", (tab, index)).fetchone()
    except Exception:  # sqlite3.Error: busy or changed under us, the full path waits
        return None
    finally:
        conn.close()
    if row is None or old is None:
        return None  # the full path names the tab or entry that is not there
    from ..errors import HabitatError
    from ..shell.shells import resolve_shell

    try:
        if resolve_shell(old["shell"]) != resolve_shell(row["shell"]):
            return None
    except HabitatError:
        return None
    again = {"command": old["command"], "tab": tab}
    return quiet_run(VerbCall("run", again, json=call.json, project=call.project), root)


def _copy_spool(path: str) -> None:
    """The run's output to stdout, as `attach.Streamer` copies it (its freed middle, if a
    keeper cut one, skipped)."""
    from ..proc.spool import Spool

    spool = Spool(path)
    for _, chunk in spool.chunks(0, spool.size()):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


def quiet_close(call: VerbCall, root: str) -> int | None:
    """`habitat close TAB` recorded in this process (no host serves the workspace at `root`,
    nothing runs there, the tab left nothing running), or None when the full path must
    answer."""
    tab = call.body.get("tab")
    if set(call.body) - {"tab"} or not tab_name(tab):
        return None
    from .quiet_state import quiet_state

    conn = quiet_state(root)
    if conn is None:
        return None
    conn.close()
    from pathlib import Path

    from ..shell.quiet_close import quiet_close as close
    from ..workspace import Workspace

    workspace = Workspace.for_project(Path(root))
    data = close(
        workspace.db_path, label=workspace.label, spool_dir=workspace.spool_dir, tab=str(tab)
    )
    if data is None:
        return None
    from .quiet_verbs import answer

    return answer(call, data, root)
