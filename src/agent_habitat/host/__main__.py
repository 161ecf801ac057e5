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
from agent_habitat.reach.lock import HostLock, is_held
from agent_habitat.workspace import Workspace


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_habitat.host")
    parser.add_argument("--project", type=Path, required=True, metavar="DIR")
    parser.add_argument("--tcp", metavar="HOST:PORT")
    parser.add_argument("--allow-remote", action="store_true")
    # The workspace's lock, taken by the process that started this one (`habitat run` at a
    # terminal: `reach.launcher.spawn_host`) and inherited as this descriptor.
    parser.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s habitat host %(message)s"
    )
    root = args.project.resolve()
    files = HostFiles(Workspace.for_project(root))
    try:
        files.prepare()
    except HabitatError as exc:
        print(f"habitat host: {exc}", file=sys.stderr)
        return 2
    # The lock first, before the server's imports (the MCP SDK: a second of CPU, several on a
    # loaded machine): a live owner holds it, so this host could never serve, and once this
    # one holds it a client sees a host starting (it waits for it instead of starting another
    # or opening the workspace itself: `reach.plain_client.starting_host`).
    if args.lock_fd is not None:
        try:
            lock = HostLock.inherited(files.lock, args.lock_fd)
        except OSError as exc:
            print(f"habitat host: --lock-fd: {exc}", file=sys.stderr)
            return 2
    else:
        lock = HostLock(files.lock)
    if args.lock_fd is None and (is_held(files.lock) or not lock.acquire()):
        print(f"habitat host: a host already runs for {root} (see {files.lock})", file=sys.stderr)
        return 3
    from .server import parse_tcp, serve_host

    try:
        tcp = parse_tcp(args.tcp, allow_remote=args.allow_remote) if args.tcp else None
        anyio.run(lambda: serve_host(root, tcp=tcp, lock=lock))
    except HabitatError as exc:
        print(f"habitat host: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
