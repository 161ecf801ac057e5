"""The top-level argument parser: bad command lines are JSON errors too under `--json`."""

from __future__ import annotations

import argparse
import contextvars
import json
import os
import sys
from typing import NoReturn

__all__ = ["JSON_ERRORS", "HabitatParser", "input_refused", "note_input_refused"]

JSON_ERRORS: contextvars.ContextVar[bool] = contextvars.ContextVar("JSON_ERRORS", default=False)
"""Set by `main` when the command line asked for `--json`: errors are then JSON too. Here, not
in `cli.common`, so a command that needs no habitat (`habitat mcp`'s bridge) never loads one."""


_REFUSED: list[bool] = []
"""Non-empty once this process refused its input (`cli.common.report_error`, exit 2): a
module-level note, not a context variable, since a refusal may be said inside the event loop."""


def note_input_refused() -> None:
    """Say that the command's input was refused: nothing of the project ran."""
    _REFUSED.append(True)


def input_refused() -> bool:
    """Whether the command's input was refused (`cli.host_start` starts no host then)."""
    return bool(_REFUSED)


class HabitatParser(argparse.ArgumentParser):
    """Bad command lines are JSON errors too when `--json` was asked for."""

    def error(self, message: str) -> NoReturn:
        if JSON_ERRORS.get():
            sys.stderr.write(json.dumps({"error": message, "field": None}) + "\n")
            self.exit(2)
        super().error(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every `add_argument` (to check its metavar), and
        # its width comes from `shutil`, whose import brings zlib, bz2 and lzma to every
        # command: the same width is asked of the terminal here.
        return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: `$COLUMNS`, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
