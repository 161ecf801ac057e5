"""`habitat events [--since ID] [--follow]` — the workspace's event journal."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import Any

import anyio

from ..events import Event
from .common import open_habitat, run_command

__all__ = ["register"]

# How often --follow looks for new events in the journal another process writes.
_FOLLOW_POLL_SECONDS = 0.2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("events", help="print the workspace's events (journal)")
    p.add_argument("--since", type=int, default=0, metavar="ID", help="only events after ID")
    p.add_argument("--follow", action="store_true", help="keep printing new events")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--project", type=Path, metavar="DIR", help="project folder")
    p.set_defaults(handler=cmd_events)


def _line(event: Event) -> str:
    ts = datetime.datetime.fromtimestamp(event.ts).strftime("%H:%M:%S.%f")[:-3]
    where = f" tab={event.tab}" if event.tab else ""
    where += f" task={event.task}" if event.task else ""
    data = " ".join(f"{k}={v}" for k, v in event.data.items() if v is not None)
    return f"{event.id:>6} {ts} {event.kind}{where} {data}"


def cmd_events(args: argparse.Namespace) -> int:
    async def body() -> int:
        cursor = args.since
        async with open_habitat(args) as habitat:
            while True:
                for event in habitat.journal.since(cursor):
                    print(event.model_dump_json() if args.json else _line(event), flush=True)
                    cursor = event.id
                if not args.follow:
                    return 0
                await anyio.sleep(_FOLLOW_POLL_SECONDS)

    try:
        return run_command(body)
    except BrokenPipeError:
        sys.stderr.close()
        return 0
