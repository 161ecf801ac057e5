"""When the CLI's text gets a terminal's styles (dim status lines, bold headers).

Rich used to decide this; the shell verbs now print their text themselves, with rich's
rules in short: styles on a terminal, none on a pipe or a file, none on a terminal that
says it cannot show them (`TERM=dumb`), and `FORCE_COLOR` / `NO_COLOR` as their names say.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["dim", "styled"]


def styled(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM", "") in ("dumb", "unknown"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def dim(text: str, stream: TextIO) -> None:
    """One status line on `stream`, dimmed on a terminal."""
    stream.write(f"\x1b[2m{text}\x1b[0m\n" if styled(stream) else f"{text}\n")
    stream.flush()
