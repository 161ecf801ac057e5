"""`habitat cancel` with no host, when nothing serves verify: answered from `state.db` here.

The full path (`cli.verify_records`) opens the workspace's record of verify to learn that no
process serves it, and says so. When no host serves the workspace, opening it would do nothing
more than read (`cli.quiet_state`, the shell's runs aside: that path opens no shell), its
project is open from the start (`--project`, or a git work tree: otherwise it would open the
cwd as the project and record that), and no process is on record as serving verify (not even
a dead one, whose row the full path drops), the answer is known: nothing to cancel. It is
printed with the words and the shape of the full path's (`verify.runner.cancel_text`; a test
keeps the text, the `--json` and the exit code equal). Anything else takes the full path.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as in `cli/__init__`: the quick path does not import `typing`
if TYPE_CHECKING:
    import sqlite3

__all__ = ["quiet_cancel", "quiet_open", "quiet_root"]


def quiet_root(project: object) -> str | None:
    """The project the full path opens at the start without recording it, or None
    (`status` reads from here too: `cli.status_quiet`)."""
    from .. import state_place

    if project is not None:
        from ..errors import UsageError
        from ..project_folder import named_project

        try:
            return named_project(str(project), "--project")
        except UsageError:
            return None  # the full path names the flag
    root = state_place.project_root()
    return root if os.path.exists(os.path.join(root, ".git")) else None


def quiet_open(
    call: dict[str, object], *, shell: bool = False
) -> tuple[str, sqlite3.Connection] | None:
    """The project `call` names and its state, open for a command whose full path opens no
    shell (`cancel`, `status`: `cli.quiet_state`; `shell=True` for one that opens it,
    `project`), or None when the full path must answer."""
    from .quiet_state import quiet_state

    root = quiet_root(call.get("project"))
    if root is None:
        return None
    conn = quiet_state(root, shell=shell)
    return None if conn is None else (root, conn)


def quiet_cancel(call: dict[str, object]) -> int | None:
    """The exit code of `habitat cancel` read as `call` (`cli.verify_light`'s reading), or
    None when the full path must answer."""
    import sqlite3

    from ..verify.runner.cancel_text import NOTHING_SERVES, cancel_head

    opened = quiet_open(call)
    if opened is None:
        return None
    conn = opened[1]
    try:
        if conn.execute("SELECT 1 FROM servers LIMIT 1").fetchone() is not None:
            return None  # a process serves verify, or served it: the full path asks
    except sqlite3.Error:
        return None  # busy or changed under us: the full path waits and says what it is
    finally:
        conn.close()
    if call.get("json"):
        import json

        answer = {"cancelled": False, "summary": NOTHING_SERVES, "epoch": None}
        sys.stdout.write(json.dumps(answer, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(cancel_head(False, NOTHING_SERVES))
    return 0
