"""The top-level argument parser: bad command lines are JSON errors too under `--json`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import NoReturn

from .common import JSON_ERRORS

__all__ = ["HabitatParser"]


class HabitatParser(argparse.ArgumentParser):
    """Bad command lines are JSON errors too when `--json` was asked for."""

    def error(self, message: str) -> NoReturn:
        if JSON_ERRORS.get():
            sys.stderr.write(json.dumps({"error": message, "field": None}) + "\n")
            self.exit(2)
        super().error(message)
