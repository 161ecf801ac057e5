"""The top-level argument parser: bad command lines are JSON errors too under `--json`."""

from __future__ import annotations

import argparse
import contextvars
import json
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
