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
result's JSON (the full path has no view of its own for it), `already` true, exit 0. The
first grant does what `ProjectTrust.grant(root, "verb")` does when it finds no entry for this
checkout: `trust.json` written whole (`write_private`) as its model dumps it, the entries
already there re-dumped as the model reads them and this checkout's added
(`trust_check.identity_of`, the time now, `verb`), then `project.trusted` in the journal,
and the result's JSON with `already` false. Only when `trust.json` reads plainly
(`status_quiet`) and every float in it is written alike by `json` and pydantic; otherwise the
full path grants it (a file it cannot read, it logs and replaces).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    import sqlite3
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
    """The exit code of `habitat trust` read as `call` (no host serves the workspace): a
    checkout trusted already, or granted here (see the module); None when the full path
    must answer."""
    if call.body:
        return None  # it takes no arguments: the full path names the field
    from .status_quiet import trusted_entry
    from .verify_quiet import quiet_open

    opened = quiet_open({"project": call.project}, shell=True)
    if opened is None:
        return None
    root, conn = opened
    try:
        entry = trusted_entry(root)
        if entry is None:
            granted = _grant(root, conn)  # not trusted yet: granted here, or None
            if granted is None:
                return None
            answer: dict[str, object] = {"root": root, "already": False, "summary": granted}
        else:
            summary = f"{root} was already trusted ({entry['how']})"
            answer = {"root": root, "already": True, "summary": summary}
    except Exception:  # git refused, a file changed: the full path says what
        return None
    finally:
        conn.close()
    from .shell_views import emit_json_data

    emit_json_data(answer)
    return 0


_IDENTITY_DEFAULTS: dict[str, object] = {"git_device": None, "git_inode": None, "root_commits": []}
"""`trust.CheckoutIdentity`'s fields after `inode`, with their defaults (a test keeps them
the model's)."""


def _as_model(identity: dict[str, Any]) -> dict[str, Any]:
    """An identity as `CheckoutIdentity` dumps it: every field, in the model's order."""
    head = {name: identity[name] for name in ("root", "device", "inode")}
    return head | {
        name: identity.get(name, default) for name, default in _IDENTITY_DEFAULTS.items()
    }


def _grant(root: str, conn: sqlite3.Connection) -> str | None:
    """Trust the checkout at `root` as `ProjectTrust.grant_sync` and `grant` do for a
    checkout with no entry: the summary of the grant, or None (nothing written) when the
    file would not be the model's."""
    import json
    import time
    from pathlib import Path

    from ..shell.journal_row import publish
    from ..state_place import state_dir
    from ..trust_check import FILE, identity_of
    from ..verify.runner.report_shape import json_floats_agree
    from ..workspace import Workspace, write_private
    from .status_quiet import trust_entries

    path = Path(state_dir(root)) / FILE
    entries = trust_entries(str(path.parent))
    if entries is None:
        return None
    roots = {
        name: {
            "identity": _as_model(entry["identity"]),
            "trusted_at": float(entry["trusted_at"]),  # the model's float, from an int too
            "how": entry["how"],
        }
        for name, entry in entries.items()
    }
    identity = identity_of(Path(root))
    roots[root] = {"identity": _as_model(identity), "trusted_at": time.time(), "how": "verb"}
    data = {"roots": roots}
    if not json_floats_agree(data):
        return None
    text = json.dumps(data, indent=1, ensure_ascii=False)
    text.encode("utf-8")  # a lone surrogate: pydantic refuses to write it (the full path)
    label = Workspace.for_project(Path(root)).label
    with conn:  # the journal's row kept only once the file is written; none if it is not
        publish(conn, label, "project.trusted", None, {"root": root, "how": "verb"})
        write_private(path, text)
    return f"trusted {root}: its code may run now (the warm-up starts)"
