"""`habitat project` and `habitat trust` with no host, answered in the CLI's process with the
standard library.

The full path builds the habitat to call `project_scene`: the git facts
(`project_scene_git`), the verify epoch at a glance (`VerifySlot.glance`: the record as it
stands against the tree now) and the trust. When no host serves the workspace, opening it
would do nothing more than read (`cli.quiet_state`), its project is open from the start
(`cli.verify_quiet.quiet_root`), and `habitat status` could be answered from the record
(`cli.status_quiet`: no process on record as serving verify, the record of the current
models' shape, `trust.json` read plainly), the scene is the same data: the same git code,
the glance from the status's epoch, the trust's summary from `trust_check`. It is printed
with the same words (`project_scene_text`) or `--json`, exit 0; the full path starts no host
behind `habitat project`, and neither does this. Anything else takes the full path, which
answers in its own words; a test compares both paths on many states.

`habitat trust` of a checkout trusted already (`ProjectTrust.grant`: its entry in
`trust.json` is for this checkout) writes nothing and publishes nothing: it prints the
result's JSON (the full path has no view of its own for it), `already` true, exit 0. Granting
the trust (writing `trust.json`, the `project.trusted` event in the journal) takes the full
path.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

    from .verb_argv import VerbCall

__all__ = ["quiet_project", "quiet_trust"]


def _scene(call: VerbCall) -> dict[str, Any] | None:
    """The scene's data as the full path's model dumps it, or None when unsure."""
    from .status_quiet import status_data
    from .verify_quiet import quiet_open

    opened = quiet_open({"project": call.project}, shell=True)
    if opened is None:
        return None
    root, conn = opened
    try:
        status = status_data(root, conn)
    finally:
        conn.close()
    if status is None:
        return None
    epoch = status["epoch"]
    glance = None
    if epoch is not None:
        glance = {
            "task": epoch["task"],
            "state": epoch["state"],
            "snapshot": epoch["snapshot"],
            "stale": status["stale"],
            "current_snapshot": status["current_snapshot"],
        }
    trust = None
    if not status["trusted"]:
        from pathlib import Path

        from ..trust_check import not_trusted

        trust = not_trusted(Path(root))
    from ..project_scene_git import scene_data

    return scene_data(root, verify=glance, trust=trust)


def quiet_project(call: VerbCall) -> int | None:
    """The exit code of `habitat project` read as `call` (no host serves the workspace), or
    None when the full path must answer."""
    if call.body:
        return None  # the scene takes no arguments: the full path names the field
    try:
        data = _scene(call)
    except Exception:  # git refused, a file changed: the full path says what
        return None
    if data is None:
        return None
    import json

    try:
        # A lone surrogate (a path git wrote in no UTF-8): the full path's writer decides.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None
    if call.json:
        from .shell_views import emit_json_data

        emit_json_data(data)
    else:
        from ..project_scene_text import project_scene_text

        sys.stdout.write(project_scene_text(data))
    return 0


def quiet_trust(call: VerbCall) -> int | None:
    """The exit code of `habitat trust` read as `call` (no host serves the workspace) for a
    checkout trusted already, or None when the full path must answer."""
    if call.body:
        return None  # it takes no arguments: the full path names the field
    from .status_quiet import trusted_entry
    from .verify_quiet import quiet_open

    opened = quiet_open({"project": call.project}, shell=True)
    if opened is None:
        return None
    root, conn = opened
    conn.close()
    try:
        entry = trusted_entry(root)
    except Exception:  # git refused, a file changed: the full path says what
        return None
    if entry is None:
        return None  # not trusted yet: the full path grants it
    from .shell_views import emit_json_data

    summary = f"{root} was already trusted ({entry['how']})"
    emit_json_data({"root": root, "already": True, "summary": summary})
    return 0
