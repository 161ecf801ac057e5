"""What `habitat status` and `habitat cancel` print, and their exit codes, from the verify
verbs' results: one writer for the embedded path (`cli.verify_records`) and for the host,
which answers the light CLI with this text (`host/verify_cli.py`), so both print the same
bytes and the CLI through a host imports neither pydantic nor the ladder. With no host, the
CLI reads the record itself and passes its data here as the model reads
(`cli/status_quiet.py`): this module imports no model, and the warm daemons' modules only
when they left a status file."""

from __future__ import annotations

import json

from ...terminal_words import for_terminal
from ..rungs.warm_records import describe as describe_checker
from .text import render_verify_cancel, render_verify_status
from .warm_status import warm_lines

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:  # read, never built, here: `habitat status` with no host passes the
    # record as read from `state.db` (cli/status_quiet.py), without pydantic
    from ...workspace import Workspace
    from .report import VerifyCancelResult, VerifyStatusResult

__all__ = ["cancel_output", "dmypy_line", "status_output"]

_NO_DMYPY = "warm: none (dmypy daemon absent)\n"
"""`rungs.dmypy.describe_warm` with no status file (`DmypyDaemon.state()` is `absent`)."""


def status_output(
    result: VerifyStatusResult, workspace: Workspace, *, as_json: bool
) -> tuple[str, int]:
    """`habitat status`'s stdout and exit code (0 green, 1 not green)."""
    warm = warm_lines(workspace)  # what the serving process warmed
    if as_json and warm:
        data = result.model_dump(mode="json") | {"warm": warm}
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    elif as_json:
        text = result.model_dump_json(indent=2) + "\n"
    else:
        text = for_terminal(render_verify_status(result)) + "".join(f"{w}\n" for w in warm)
        others = _warm_pytest_line(workspace) + describe_checker(workspace)
        dmypy = dmypy_line(workspace)
        if dmypy == _NO_DMYPY and others:
            dmypy = ""  # "none" is untrue beside a warm pytest or checker
        text += dmypy + others
    return text, 0 if result.green else 1


def _warm_pytest_line(workspace: Workspace) -> str:
    """`WarmPytest.describe()`, or '' (its module loads only when it left its status file)."""
    if not (workspace.state_dir / "pytest-warm" / "status.json").exists():
        return ""  # `WarmPytest.record()` finds none
    from ..rungs.warm_pytest import WarmPytest

    return WarmPytest(workspace).describe() or ""


def dmypy_line(workspace: Workspace) -> str:
    """The type daemon's line (`rungs.dmypy.describe_warm`); its module (psutil, the rung's
    command runner: 45M instructions, a twentieth of `habitat status`) loads only when the
    daemon left its status file."""
    if not (workspace.state_dir / "dmypy" / "status.json").exists():
        return _NO_DMYPY
    from ..rungs.dmypy import describe_warm

    return describe_warm(workspace)


def cancel_output(result: VerifyCancelResult, *, as_json: bool) -> tuple[str, int]:
    """`habitat cancel`'s stdout and exit code (0: the answer says what was cancelled)."""
    if as_json:
        return result.model_dump_json(indent=2) + "\n", 0
    return render_verify_cancel(result), 0
