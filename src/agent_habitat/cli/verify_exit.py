"""The exit codes of `habitat verify`, one table for the one-shot path and the host's."""

from __future__ import annotations

__all__ = ["EXIT_CODES", "QUEUED"]

EXIT_CODES: dict[str, int] = {
    "green": 0,
    "red": 1,
    "error": 1,
    "died": 1,
    "cancelled": 1,
    # Through the host an epoch can also end stale (the tree moved while it climbed) or
    # lost (its host ended first): neither is the tree's verdict, so neither is green.
    "stale": 1,
    "lost": 1,
    "incomplete": 3,
    "nothing_to_verify": 4,
}
"""Verdict state → exit code; 2 is usage or configuration, 130 an interrupt."""

QUEUED = 5
"""`--background`: handed to the host, no verdict yet. Never 0: `habitat verify --background
&& git commit` must not commit on a verdict nobody has seen."""
