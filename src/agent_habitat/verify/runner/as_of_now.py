"""A recorded epoch as it stands against the tree now, with no runner in the process:
lost when nothing serves it any more, stale when files changed since its snapshot, its own
verdict again once they are back. Standard library only: the slot reads the record with the
report's model (`slot.VerifySlot._recorded`), `habitat status` with no host reads the same
record without pydantic (`cli/status_quiet.py`), and both take their words from here."""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from .report import EpochReport

__all__ = ["LISTED_PATHS", "as_of_now", "never_verified"]

LISTED_PATHS = 20
"""Paths listed at most (changed, touched): the count says how many there are."""


def never_verified(root: object) -> str:
    """The summary of a project with no epoch recorded."""
    return f"never verified: no epoch recorded for {root}; run habitat verify"


def as_of_now(report: EpochReport, changed: list[str] | None, *, served: bool) -> None:
    """`report` (a copy of the record's) updated in place to the tree as it is now.
    `changed`: the paths that differ between its snapshot and the tree's now (None: it took
    no snapshot); `served`: a live process is on record as serving verify for the project."""
    if report.state in ("queued", "running") and not served:
        report.state, report.green = "lost", False
    if changed is None:
        return
    follows = report.finished_at is not None and not report.moved_while_running
    # A finished epoch that went stale afterwards follows the tree (back to its own
    # verdict once the files are back); one the tree moved under while it ran does not.
    everything = sorted(set(changed) if follows else set(report.changed) | set(changed))
    if everything:
        report.stale, report.green = True, False
        report.changed, report.changed_count = everything[:LISTED_PATHS], len(everything)
        if report.state not in ("queued", "running", "cancelled", "error", "lost"):
            report.state = "stale"
    elif follows and report.stale:
        report.stale, report.changed, report.changed_count = False, [], 0
        if report.state == "stale" and report.verified_state is not None:
            # One of the ladder's states, which the report types as a plain str.
            report.state = report.verified_state  # type: ignore[assignment]
        report.green = report.state == "green" and not report.covers
