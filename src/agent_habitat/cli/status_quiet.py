"""`habitat status` with no host, when opening the workspace's record would do nothing more
than read: answered here from `state.db`, `trust.json`, `warm.json` and the tree, standard
library only (no pydantic, no event loop: the full path's 0.25 s over bare Python).

The full path (`cli.verify_records`) opens the record as a one-shot verify does, reads the
newest epoch with the report's model, compares its snapshot with the tree now
(`verify.runner.as_of_now`), asks the trust, and prints `verify.runner.cli_text`'s
`status_output`. This reads the same data as plain JSON and hands it to the same writer and
the same words: `as_of_now` for the epoch against the tree, `text` for the lines,
`cli_text` for the warm-up's and the daemons' lines and the JSON. It answers only what it
can prove the full path would print the same:

* the state is quiet (`cli.quiet_state`: no host, nothing configured, no warm daemon's status
  file, nothing to record) and the project open from the start (`cli.verify_quiet`);
* no process is on record as serving verify (the full path asks whether it lives, and drops
  a dead one's row);
* the recorded report has exactly the shape of the current models (`report_shape`), its
  floats written alike by `json` and pydantic, and `trust.json` reads plainly;
* a `--task` is on record (else the full path's error says so).

Anything else, and any error on the way (git refusing, a file changing under it), goes to the
full path, which answers it in its own words: this only reads, so nothing is left half done.
A test compares both paths' stdout, stderr and exit code on many recorded states.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

    from ..verify.runner.report import VerifyStatusResult
    from ..verify.snapshot import Snapshot

__all__ = ["quiet_status", "status_data", "trust_entries", "trusted_entry"]

_STATUS_FIELDS = (
    "green",
    "summary",
    "stale",
    "changed",
    "current_snapshot",
    "running",
    "queued",
    "epoch",
    "time",
    "served_by",
    "recorded",
    "trusted",
)
"""`VerifyStatusResult`'s fields in order (a test keeps them the model's)."""
_HOW = ("verb", "prompt", "verify")  # trust.TrustHow
_IDENTITY = (
    ("root", "str"),
    ("device", "int"),
    ("inode", "int"),
    ("git_device", "int?"),
    ("git_inode", "int?"),
    ("root_commits", "[str]"),
)
"""`trust.CheckoutIdentity`'s fields: those after `inode` may be left out (their defaults)."""


class _Read:
    """A report's data as its model reads: fields as attributes (nested ones too), set in
    place, dumped as the model dumps it (the data has the model's shape: `report_shape`)."""

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        try:
            return _read(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._data:
            raise AttributeError(name)
        self._data[name] = value

    def model_dump(self, mode: str = "json") -> dict[str, Any]:
        return dict(self._data)

    def model_dump_json(self, indent: int | None = None) -> str:
        return json.dumps(self._data, indent=indent, ensure_ascii=False)


def _read(value: Any) -> Any:
    if type(value) is dict:
        return _Read(value)
    if type(value) is list:
        return [_read(v) for v in value]
    return value


def _as_result(data: dict[str, Any]) -> VerifyStatusResult:
    # Read as the model reads: the writers only read attributes and dump it.
    return _Read(data)  # type: ignore[return-value]


def _recorded(conn: sqlite3.Connection, root: str, task: str | None) -> sqlite3.Row | None:
    """`EpochRecords.latest(root, task)`'s row."""
    if task is not None:
        query = "SELECT * FROM verify_epochs WHERE root = ? AND task = ?"
        args: tuple[str, ...] = (root, task.split(".", 1)[0])
    else:
        query = "SELECT * FROM verify_epochs WHERE root = ? ORDER BY updated_at DESC LIMIT 1"
        args = (root,)
    row: sqlite3.Row | None = conn.execute(query, args).fetchone()
    return row


def _snapshot(raw: str | None) -> Snapshot | None:
    from ..verify.snapshot import Snapshot

    if not raw:
        return None
    data = json.loads(raw)
    return Snapshot(id=data["id"], head=data["head"], hashes=data["hashes"], in_git=data["in_git"])


def trust_entries(state: str) -> dict[str, Any] | None:
    """`trust.json`'s entries by root ({} without the file), or None when it does not read
    plainly as `trust`'s model reads it (the full path then says so)."""
    from ..trust_check import FILE
    from ..verify.runner.report_shape import fits

    try:
        with open(os.path.join(state, FILE), encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    roots = data.get("roots", {}) if type(data) is dict else None
    if type(roots) is not dict:
        return None
    for entry in roots.values():
        identity = entry.get("identity") if type(entry) is dict else None
        if (
            type(identity) is not dict
            or not set(identity) <= {name for name, _ in _IDENTITY}
            or not all(name in identity for name, _ in _IDENTITY[:3])
            or not all(fits(identity.get(n), kind) for n, kind in _IDENTITY if n in identity)
            or type(entry.get("trusted_at")) not in (int, float)
            or entry.get("how") not in _HOW
        ):
            return None
    return roots


def _trusted(root: str, state: str) -> bool | None:
    """Whether the project is trusted (`ProjectTrust.state`), None when unsure."""
    from pathlib import Path

    from ..trust_check import identity_of, same_checkout

    entries = trust_entries(state)
    if entries is None:
        return None
    identity = identity_of(Path(root))
    entry = entries.get(root)
    return entry is not None and same_checkout(entry["identity"], identity)


def trusted_entry(root: str) -> dict[str, Any] | None:
    """The trust entry of the checkout at `root` (`ProjectTrust._entry`), or None when it
    is not trusted or `trust.json` does not read plainly (`habitat trust`: `cli.project_quiet`)."""
    from pathlib import Path

    from ..state_place import state_dir
    from ..trust_check import identity_of, same_checkout

    entries = trust_entries(state_dir(root))
    entry = None if entries is None else entries.get(root)
    if entry is None or not same_checkout(entry["identity"], identity_of(Path(root))):
        return None
    return dict(entry)


def _status(root: str, conn: sqlite3.Connection, task: str | None) -> dict[str, Any] | None:
    """The status's data as the full path's model dumps it, or None when unsure."""
    from pathlib import Path

    from ..state_place import state_dir
    from ..trust_check import NOT_TRUSTED, not_trusted
    from ..verify.output_dirs import output_dirs
    from ..verify.runner.as_of_now import as_of_now, never_verified
    from ..verify.runner.report_shape import fits
    from ..verify.runner.text import epoch_summary
    from ..verify.snapshot import changed_between, take_snapshot

    if conn.execute("SELECT 1 FROM servers LIMIT 1").fetchone() is not None:
        return None  # a process serves verify, or served it: the full path asks
    row = _recorded(conn, root, task)
    if row is None and task is not None:
        return None  # the full path's error names the task
    current = take_snapshot(Path(root), output_dirs(root))
    result: dict[str, Any] = dict.fromkeys(_STATUS_FIELDS)
    result.update(green=False, stale=False, changed=[], current_snapshot=current.id)
    result.update(recorded=True, trusted=True)
    if row is None:
        result["summary"] = never_verified(root)
    else:
        report = json.loads(row["report_json"])
        if not fits(report, "EpochReport"):
            return None
        old = _snapshot(row["snapshot_json"])
        changed: list[str] | None = None if old is None else []
        if old is not None and old.id != current.id:
            changed = changed_between(Path(root), old, current)
        read = _Read(report)
        as_of_now(read, changed, served=False)  # type: ignore[arg-type]  # read as the model
        result.update(green=report["green"], stale=report["stale"], changed=report["changed"])
        result.update(summary=epoch_summary(read), epoch=report)  # type: ignore[arg-type]
    if task is None:
        trusted = _trusted(root, state_dir(root))
        if trusted is None:
            return None
        if not trusted:
            summary = result["summary"]
            result["trusted"] = False
            result["summary"] = (
                not_trusted(Path(root))
                if result["epoch"] is None
                else f"{NOT_TRUSTED} now; {summary}"
            )
    return result


def status_data(root: str, conn: sqlite3.Connection) -> dict[str, Any] | None:
    """`habitat status`'s data for the whole project (no `--task`), or None when unsure:
    `habitat project` takes its verify glance and trust from it (`cli.project_quiet`)."""
    return _status(root, conn, None)


def quiet_status(call: dict[str, object]) -> int | None:
    """The exit code of `habitat status` read as `call` (`cli.verify_light`'s reading), or
    None when the full path must answer."""
    from .verify_quiet import quiet_open

    opened = quiet_open(call)
    if opened is None:
        return None
    root, conn = opened
    task = call.get("task")
    try:
        data = _status(root, conn, None if task is None else str(task))
    except Exception:  # git refused, a file changed: the full path says what
        return None
    finally:
        conn.close()
    from ..verify.runner.report_shape import json_floats_agree

    if data is None or not json_floats_agree(data):
        return None
    from pathlib import Path

    from ..verify.runner.cli_text import status_output
    from ..workspace import Workspace

    try:
        text, code = status_output(
            _as_result(data), Workspace.for_project(Path(root)), as_json=bool(call.get("json"))
        )
        text.encode("utf-8")  # a lone surrogate from the record: pydantic refuses to write it
    except Exception:  # a warm file that does not read: the full path's words
        return None
    sys.stdout.write(text)
    return code
