"""`habitat dashboard` — the live web page of the workspace, in a browser.

Ensures the host runs with loopback TCP (started with `--tcp 127.0.0.1:0` when none runs;
a running host without it is asked over the unix socket to open it, keeping its warm state),
asks it over the unix socket for a one-time login code, prints the URL and opens it in a
browser when one is there (`--no-browser`: only print). The browser is given a file, not the
URL: a browser's command line is readable by every local user (`/proc/PID/cmdline`), so the
code goes into `dashboard-login.html` in the state folder (0600), a page that forwards to
the URL, and only the owner can read it (host/dashboard/login.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import webbrowser
from pathlib import Path
from typing import Any

from ..errors import HabitatError, UsageError
from .common import project_root

__all__ = ["register"]

DEFAULT_TCP = "127.0.0.1:0"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dashboard",
        help="open the live dashboard (prints its one-time login URL)",
        description=(
            "Print (and open in a browser) the URL of the workspace's live dashboard: tabs, "
            "the verify epoch, a timeline and the event journal. Starts the host with loopback "
            "TCP when none runs. The URL carries a one-time login, good for 2 minutes, which "
            "the page exchanges for a session cookie; the browser is handed an owner-only file "
            "that forwards to it, so the code never shows on a command line."
        ),
    )
    parser.add_argument("--project", type=Path, metavar="DIR", help="project folder")
    parser.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        default=DEFAULT_TCP,
        help=f"where a host started now listens (default {DEFAULT_TCP}: any free port)",
    )
    parser.add_argument("--no-browser", action="store_true", help="only print the URL")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=cmd_dashboard)


def cmd_dashboard(args: argparse.Namespace) -> int:
    try:
        url, started, pid = _login_url(args)
    except UsageError as exc:
        return _fail(args, str(exc), 2)
    except HabitatError as exc:
        return _fail(args, str(exc), 1)
    opened = False if args.no_browser else _open(_forward_file(args, url).as_uri())
    if args.json:
        print(json.dumps({"url": url, "host_pid": pid, "started": started, "opened": opened}))
        return 0
    print(f"dashboard: {url}")
    print(f"  host pid {pid}{' (started now)' if started else ''}; the login works once, 2 min")
    if not args.no_browser and not opened:
        print("  no browser found here: open the URL yourself")
    return 0


def _login_url(args: argparse.Namespace) -> tuple[str, bool, int]:
    import httpx2

    from ..host.tcp_address import parse_tcp
    from ..reach import launcher

    root = project_root(args)
    parse_tcp(args.tcp, allow_remote=False)
    record = launcher.find_host(root)
    # A host started without TCP (the agent's `habitat mcp`) opens a loopback listener when
    # asked over its socket: its warm state (dmypy, the warm pytest, the runs) stays.
    handle = launcher.ensure_host(root, tcp=args.tcp if record is None else None)
    record = handle.record
    transport = httpx2.HTTPTransport(uds=record.socket)
    with httpx2.Client(transport=transport, base_url="http://localhost", timeout=30) as client:
        tcp = record.tcp
        if tcp is None:
            opened = client.post("/api/host/tcp", json={"tcp": args.tcp})
            if opened.status_code == 404:
                raise HabitatError(
                    f"the host pid {record.pid} runs without TCP and cannot open it (an older "
                    "version); restart it: `habitat host stop && habitat dashboard`"
                )
            if opened.status_code != 200:
                raise HabitatError(f"the host could not open TCP: {opened.json()['error']}")
            tcp = str(opened.json()["tcp"])
        response = client.post("/api/dashboard/login", json={})
        if response.status_code == 404:
            raise HabitatError(
                f"the host pid {record.pid} has no dashboard (an older version); restart it: "
                "`habitat host stop && habitat dashboard`"
            )
        path = response.raise_for_status().json()["path"]
    return tcp + path, handle.started, record.pid


def _forward_file(args: argparse.Namespace, url: str) -> Path:
    """The owner-only page that forwards the browser to the login `url`."""
    from ..host.dashboard import forward_page
    from ..reach import launcher
    from ..workspace import write_private

    files = launcher.host_files(project_root(args))
    files.check_private()
    path = files.state_dir / "dashboard-login.html"
    write_private(path, forward_page(url))
    return path


def _open(url: str) -> bool:
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    return bool(browser.open(url))


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if args.json:
        sys.stderr.write(json.dumps({"error": message, "field": None}) + "\n")
    else:
        print(f"habitat dashboard: {message}", file=sys.stderr)
    return code
