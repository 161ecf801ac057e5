"""The words of `verify_cancel` that do not need its models: the answer when no process
serves verify, and the first line of its text. Standard library only: `habitat cancel` with
no host and nothing serving verify prints them without loading the ladder
(`cli.verify_quiet`), as the full path does (`slot.VerifySlot.cancel`,
`text.render_verify_cancel`)."""

from __future__ import annotations

__all__ = ["NOTHING_SERVES", "cancel_head"]

NOTHING_SERVES = "nothing to cancel: no process serves verify here"


def cancel_head(cancelled: bool, summary: str) -> str:
    """`cancelled=false: nothing to cancel: …`, the first line of the cancel's text."""
    return f"cancelled={str(cancelled).lower()}: {summary}\n"
