"""`habitat dashboard` — the live web page of the workspace, in a browser.

Ensures the host runs with loopback TCP (started with `--tcp 127.0.0.1:0` when none runs;
a running host without it is asked over the unix socket to open it, keeping its warm state),
asks it over the unix socket for a one-time login code, prints the URL and opens it in a
browser when one is there (`--no-browser`: only print). The browser is given a file, not the
URL: a browser's command line is readable by every local user (`/proc/PID/cmdline`), so the
code goes into `dashboard-login.html` in the state folder (0600), a page that forwards to
the URL, and only the owner can read it (host/dashboard/login.py). A running host is asked
with the standard library alone (`reach.plain_client`); the launcher loads only to start one.
"""

from __future__ import annotations

import argparse
import json
import sys
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
    from ..host.tcp_address import parse_tcp
    from ..reach.plain_client import HostGone, PlainHost, StateNotSafe, host_of

    root = project_root(args)
    parse_tcp(args.tcp, allow_remote=False)
    try:
        host = host_of(root)
    except StateNotSafe:
        host = None  # the launcher refuses the folder and says why
    started = False
    if host is None:
        from ..reach import launcher

        handle = launcher.ensure_host(root, tcp=args.tcp)
        record = handle.record
        host = PlainHost(record.pid, record.socket, record.model_dump())
        started = handle.started
    try:
        # A host started without TCP (the agent's `habitat mcp`) opens a loopback listener
        # when asked over its socket: its warm state (dmypy, the warm pytest, the runs) stays.
        tcp = host.record.get("tcp")
        if tcp is None:
            opened = host.ask("POST", "/api/host/tcp", {"tcp": args.tcp}, timeout=30)
            if opened.status == 404:
                raise HabitatError(
                    f"the host pid {host.pid} runs without TCP and cannot open it (an older "
                    "version); restart it: `habitat host stop && habitat dashboard`"
                )
            if opened.status != 200 or not isinstance(opened.data, dict):
                refusal = opened.refusal()
                said = refusal.get("error") if isinstance(refusal, dict) else opened.status
                raise HabitatError(f"the host could not open TCP: {said}")
            tcp = str(opened.data["tcp"])
        response = host.ask("POST", "/api/dashboard/login", {}, timeout=30)
    except HostGone as exc:
        raise host.silent(exc) from exc
    if response.status == 404:
        raise HabitatError(
            f"the host pid {host.pid} has no dashboard (an older version); restart it: "
            "`habitat host stop && habitat dashboard`"
        )
    if response.status != 200 or not isinstance(response.data, dict):
        raise HabitatError(f"the host answered /api/dashboard/login with HTTP {response.status}")
    return str(tcp) + str(response.data["path"]), started, host.pid


def _forward_file(args: argparse.Namespace, url: str) -> Path:
    """The owner-only page that forwards the browser to the login `url`."""
    from ..host.dashboard import forward_page
    from ..reach.files import HostFiles
    from ..workspace import Workspace, write_private

    files = HostFiles(Workspace.for_project(project_root(args)))
    files.check_private()
    path = files.state_dir / "dashboard-login.html"
    write_private(path, forward_page(url))
    return path


def _open(url: str) -> bool:
    import webbrowser

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
