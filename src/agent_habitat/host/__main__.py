"""`python -m agent_habitat.host --project DIR [--tcp HOST:PORT] [--allow-remote]`.

The host in the foreground; `habitat host start` launches this detached. Exit status: 0
when stopped or idle, 2 for a refusal (bad flags, unsafe permissions, bad configuration),
3 when another host already runs for the workspace.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from agent_habitat.errors import HabitatError
from agent_habitat.reach.files import HostFiles
from agent_habitat.reach.lock import is_held
from agent_habitat.workspace import Workspace


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_habitat.host")
    parser.add_argument("--project", type=Path, required=True, metavar="DIR")
    parser.add_argument("--tcp", metavar="HOST:PORT")
    parser.add_argument("--allow-remote", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s habitat host %(message)s"
    )
    root = args.project.resolve()
    lock = HostFiles(Workspace.for_project(root)).lock
    if is_held(lock):
        # Before the server's imports (the MCP SDK: seconds of CPU on a loaded machine) and
        # the lock's patience: a live owner holds it, so this host could never serve.
        print(f"habitat host: a host already runs for {root} (see {lock})", file=sys.stderr)
        return 3
    from .server import AlreadyRunning, parse_tcp, serve_host

    try:
        tcp = parse_tcp(args.tcp, allow_remote=args.allow_remote) if args.tcp else None
        anyio.run(lambda: serve_host(root, tcp=tcp))
    except AlreadyRunning as exc:
        print(f"habitat host: {exc}", file=sys.stderr)
        return 3
    except HabitatError as exc:
        print(f"habitat host: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
