"""Requests and results of the verification ladder (DESIGN §5).

These are the contract: `habitat verify --json` prints a `LadderResult` dump, and the
MCP tools of the runner issue return the same models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .ladder_names import POLICIES, RUNGS, UNCOMPARED, new_warnings
from .timing import Timing

__all__ = [
    "POLICIES",
    "RUNGS",
    "UNCOMPARED",
    "Diagnostic",
    "LadderRequest",
    "LadderResult",
    "LadderState",
    "Policy",
    "RungName",
    "RungResult",
    "RungState",
    "Selection",
    "Severity",
    "new_warnings",
]

RungName = Literal[
    "diagnose.files", "compile.project", "build.affected", "test.scoped", "test.full"
]
Policy = Literal["minimal", "standard", "strict", "ci_parity"]
RungState = Literal["green", "red", "skipped", "error", "cancelled", "died"]
"""`green`: ran and passed; `red`: ran and found defects; `skipped`: did not run (see
`reason`); `error`: the tool itself failed (bad usage, timeout, crash with an exit code);
`cancelled`: its request was cancelled; `died`: its process was killed by a signal."""

LadderState = Literal[
    "green", "red", "incomplete", "nothing_to_verify", "error", "cancelled", "died"
]
"""`green`: at least one rung ran and every rung that ran is green; `incomplete`: nothing
failed, but a rung was skipped because a tool is missing, or no rung could run at all (see
`LadderResult.reason`); `nothing_to_verify`: the tree is unchanged since HEAD and nothing
was asked for explicitly, so no rung had work."""

Severity = Literal["error", "warning", "note"]


class Diagnostic(BaseModel):
    """One finding of a tool, located in a file when the tool says where."""

    model_config = ConfigDict(defer_build=True)

    file: str | None = None
    """Path relative to the project root when inside it."""
    line: int | None = None
    col: int | None = None
    code: str | None = None
    """Tool-specific rule or error code, e.g. `F401`, `arg-type`, `AssertionError`."""
    severity: Severity = "error"
    message: str
    source: str = ""
    """The tool that reported it: `syntax`, `ruff`, `mypy`, `pyright`, `pytest`, `import`, …"""
    preexisting: bool = False
    """The same finding exists at the snapshot's base (HEAD): same tool and code, with the
    same message and source line text, or on the line this one maps to through the diff.
    Listed and counted, but it does not make the rung red."""


class Selection(BaseModel):
    """Which tests the change affects, and why."""

    model_config = ConfigDict(defer_build=True)

    full: bool
    """True: run the whole suite (see `reasons`)."""
    tests: list[str] = Field(default_factory=list)
    """Test files, folders or node ids (`file::test`, from recorded test dependencies) when
    not `full`; pytest args when filtered."""
    reasons: list[str] = Field(default_factory=list)
    """Why each test or widening was chosen, e.g. `tests/test_a.py imports pkg.a`."""
    filtered: bool = False
    """True when an explicit filter replaced the import-graph selection."""

    def listed(self, count: int) -> str:
        """The first `count` reasons, and how many more there are when some are left out."""
        rest = len(self.reasons) - count
        return "; ".join(self.reasons[:count]) + (f"; {rest} more" if rest > 0 else "")


class RungResult(BaseModel):
    """The outcome of one rung."""

    model_config = ConfigDict(defer_build=True)

    rung: RungName
    task: str
    """Task id: `<ladder id>.<rung>`."""
    state: RungState
    reason: str | None = None
    """Why it was skipped or errored, or what made it red, in one line."""
    tool: str | None = None
    """What ran, e.g. `ruff`, `dmypy`, `pyright`, `compileall`, `pytest`, `configured`."""
    duration_s: float = 0.0
    """The rung's own time: from its work's start (beside an earlier rung, when it started
    ahead: verify/ahead.py) to its end."""
    command: list[str] = Field(default_factory=list)
    """The exact argv of the (last) process the rung ran; empty when none ran."""
    command_line: str = ""
    """`command` as one shell-quoted line."""
    exit_code: int | None = None
    signal: str | None = None
    """Signal name (e.g. `SIGKILL`) when the process died by one."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    """New findings first, then the pre-existing ones (`preexisting=True`)."""
    new_findings: int = 0
    """Findings the change introduced (these decide red)."""
    preexisting_findings: int = 0
    """Findings that exist at HEAD too; never red, never hidden."""
    baseline: str | None = None
    """What the findings were compared with: `HEAD <commit>` (with `cached` when the base
    results came from the cache), `none: <why>` (every finding counts as new), `strict`
    (`lint = "strict"`: every finding counts), or None when the rung has no findings to
    compare."""
    provisional: bool = False
    """Green, but not to be trusted yet: generated sources are older than their inputs
    (`[tool.habitat.generated]`); `build.affected` regenerates them in the same climb."""
    missing: str | None = None
    """When skipped because a tool is missing: its name, or for a type checker the project
    configures, the command that installs it (the ladder is then `incomplete`)."""
    notes: list[str] = Field(default_factory=list)
    """Facts worth knowing, e.g. `dmypy daemon was dead; restarted`."""
    stopped_by: RungName | None = None
    """`cancelled` before it finished because this later rung, whose work ran beside it,
    ended red first: the climb ended there (verify/ahead.py); never the verdict's state."""
    _climb_s: float | None = PrivateAttr(default=None)

    @property
    def climb_s(self) -> float:
        """The climb's time in this rung: its `duration_s`, or for one whose work started
        beside an earlier rung, only the wait once the climb reached it (so the rungs of a
        verdict add up to its wall: `timing.Timing.rungs_s`)."""
        return self.duration_s if self._climb_s is None else self._climb_s

    def waited(self, seconds: float) -> None:
        """Its work started ahead: the climb waited `seconds` in it."""
        self._climb_s = seconds

    output: str = ""
    """The tail of the raw output, capped."""
    spool: str | None = None
    """Path of the full raw output."""


class LadderRequest(BaseModel):
    """What to verify."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    policy: Policy | None = None
    """Default: `[tool.habitat] policy`, else `standard`."""
    rungs: list[RungName] | None = None
    """Run exactly these rungs (in ladder order) instead of the policy's."""
    files: list[str] | None = None
    """Treat these files as the change instead of the git dirty set."""
    filter: list[str] | None = None
    """pytest node ids, paths, or `-k EXPR` / `-m EXPR`; replaces the test selection."""


class LadderResult(BaseModel):
    """The outcome of one climb."""

    model_config = ConfigDict(defer_build=True)

    id: str
    snapshot: str
    """Snapshot id the climb verified (HEAD + dirty set with content hashes)."""
    head: str | None
    policy: Policy
    state: LadderState
    rungs: list[RungResult]
    touched: list[str]
    """The change: files that differ from HEAD (or the files given)."""
    selection: Selection | None = None
    duration_s: float = 0.0
    reason: str | None = None
    """Why the ladder is `incomplete` or `nothing_to_verify`, and what to configure."""
    timing: Timing | None = None
    """Request to verdict and where it went (`duration_s` is the climb alone)."""

    @property
    def ok(self) -> bool:
        return self.state == "green"
