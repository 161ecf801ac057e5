"""`habitat demo` — a scripted tour in a temporary workspace."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from .common import run_command

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("demo", help="a short tour in a temporary workspace")
    p.set_defaults(handler=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo_tour import run_demo

    # State and project live in a temporary folder, removed after the tour.
    with tempfile.TemporaryDirectory(prefix="habitat-demo-") as tmp:

        async def body() -> int:
            await run_demo(Path(tmp))
            return 0

        return run_command(body)
