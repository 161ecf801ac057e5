"""The ladder's names and words that need no model, standard library only: the rungs, the
policies, the note of uncompared warnings and the line that names new warnings. `models`
re-exports them; the verify text (`runner/text.py`) takes them from here, so `habitat
status` with no host can print it without pydantic (`cli/status_quiet.py`)."""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Protocol

    from .models import Policy, RungName

    class _Finding(Protocol):
        @property
        def file(self) -> str | None: ...
        @property
        def line(self) -> int | None: ...
        @property
        def code(self) -> str | None: ...
        @property
        def severity(self) -> str: ...
        @property
        def preexisting(self) -> bool: ...


__all__ = ["POLICIES", "RUNGS", "UNCOMPARED", "new_warnings"]

UNCOMPARED = (
    "warnings not compared with HEAD (no error, so HEAD was not checked): may predate the change"
)
"""The note of a rung whose warnings are listed without HEAD's: it had no error to settle."""

RUNGS: tuple[RungName, ...] = (
    "diagnose.files",
    "compile.project",
    "build.affected",
    "test.scoped",
    "test.full",
)
"""Every rung, in ladder order (`models.RungName`)."""

POLICIES: dict[Policy, tuple[RungName, ...]] = {
    "minimal": ("diagnose.files",),
    "standard": ("diagnose.files", "compile.project", "test.scoped"),
    "strict": ("diagnose.files", "compile.project", "build.affected", "test.scoped"),
    "ci_parity": RUNGS,
}


def new_warnings(diagnostics: Iterable[_Finding]) -> str:
    """`1 new warning (not red): src/lib.rs:342 clippy::needless_return`, of findings settled
    against HEAD: the warnings HEAD does not have ("" when there is none). A warning is never
    red, but it is the change's, and an answer that names only the tools hid it."""
    fresh = dict.fromkeys(
        (d.file, d.line, d.code)
        for d in diagnostics
        if d.severity == "warning" and not d.preexisting
    )
    if not fresh:
        return ""
    file, line, code = next(iter(fresh))
    more = f" and {len(fresh) - 1} more" if len(fresh) > 1 else ""
    plural = "s" if len(fresh) > 1 else ""
    return f"{len(fresh)} new warning{plural} (not red): {file}:{line} {code or ''}".rstrip() + more
