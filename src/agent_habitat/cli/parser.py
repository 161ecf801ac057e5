"""The top-level argument parser: bad command lines are JSON errors too under `--json`."""

from __future__ import annotations

import argparse
import contextvars
import json
import sys
from typing import NoReturn

__all__ = ["JSON_ERRORS", "HabitatParser"]

JSON_ERRORS: contextvars.ContextVar[bool] = contextvars.ContextVar("JSON_ERRORS", default=False)
"""Set by `main` when the command line asked for `--json`: errors are then JSON too. Here, not
in `cli.common`, so a command that needs no habitat (`habitat mcp`'s bridge) never loads one."""


class HabitatParser(argparse.ArgumentParser):
    """Bad command lines are JSON errors too when `--json` was asked for."""

    def error(self, message: str) -> NoReturn:
        if JSON_ERRORS.get():
            sys.stderr.write(json.dumps({"error": message, "field": None}) + "\n")
            self.exit(2)
        super().error(message)
