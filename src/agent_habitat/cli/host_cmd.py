"""`habitat host start|stop|status|token` — the workspace host, from a terminal.

`status`, `token` and a `start` that finds the host running ask it with the standard library
alone (`reach.plain_client`): the command a person types to see whether the host is well
must not pay a second of imports first. Starting or stopping one loads the launcher.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HabitatError, UsageError

if TYPE_CHECKING:
    from ..reach import launcher as launcher_types
    from ..reach.plain_client import PlainHost

__all__ = ["register"]


def register(subparsers: Any) -> None:
    host = subparsers.add_parser(
        "host",
        help="start, stop or inspect the workspace host",
        description=(
            "The workspace host: one long-lived process per workspace serving MCP over "
            "Streamable HTTP (/mcp), the event stream (/events) and the JSON API (/api/…) on a "
            "unix socket in the state folder, and on loopback TCP when asked (with a token)."
        ),
    )
    actions = host.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start the host (or find the running one)")
    start.add_argument(
        "--tcp", metavar="HOST:PORT", help="also listen on TCP, e.g. 127.0.0.1:8765 (port 0: any)"
    )
    start.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --tcp address (the token is still required)",
    )
    for name, helptext in (
        ("stop", "stop the host (runs go on in their own sessions)"),
        ("status", "pid, uptime, clients, tabs, running runs and warm daemons of the host"),
    ):
        actions.add_parser(name, help=helptext)
    token = actions.add_parser(
        "token",
        help="print the bearer token TCP clients must send (--rotate: replace it)",
        description=(
            "Print the bearer token TCP clients must send: the running host's own, else the "
            "one a host will use. --rotate makes a new one; a running host accepts only the "
            "new one from then on, and every browser logged into it is logged out."
        ),
    )
    token.add_argument(
        "--rotate",
        action="store_true",
        help="revoke the token (and the dashboard sessions opened with it) and print a new one",
    )
    for parser in actions.choices.values():
        parser.add_argument("--project", type=Path, metavar="DIR", help="project folder")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.set_defaults(handler=cmd_host)


def _root(args: argparse.Namespace) -> Path:
    project: Path | None = args.project
    if project is None:
        from ..workspace import find_project_root

        return find_project_root()
    if not project.is_dir():
        raise UsageError(f"--project {project} is not a directory")
    from ..project_folder import a_project

    return a_project(project, named="--project")


def cmd_host(args: argparse.Namespace) -> int:
    try:
        root = _root(args)
        if args.action == "status":
            return _status(root, args)
        if args.action == "token":
            return _token(root, args)
        if args.action == "start":
            return _start(root, args)
        if args.action == "stop":
            stopped = _stop(root)
            if args.json:
                print(json.dumps(_stopped_json(stopped)))
            else:
                print(stopped.said() if stopped else "no host runs for this workspace")
            return 0
        raise AssertionError(args.action)  # argparse allows only the actions above
    except UsageError as exc:
        print(f"habitat host: {exc}", file=sys.stderr)
        return 2
    except HabitatError as exc:
        print(f"habitat host: {exc}", file=sys.stderr)
        return 1


def _stop(root: Path) -> launcher_types.StoppedHost | None:
    """`launcher.stop_host`; when no host holds the workspace's lock (none runs, none is
    starting) that is said without loading the launcher."""
    from .. import state_place
    from ..proc.flocks import is_held
    from ..reach.plain_client import LOCK_NAME

    if not is_held(os.path.join(state_place.state_dir(str(root)), LOCK_NAME)):
        return None
    from ..reach import launcher

    return launcher.stop_host(root)


def _stopped_json(stopped: launcher_types.StoppedHost | None) -> dict[str, Any]:
    if stopped is None:
        return {"stopped": False, "pid": None}
    return {
        "stopped": True,
        "pid": stopped.pid,
        "signal": stopped.signal,
        "waited_s": round(stopped.waited_s, 3),
        "reaped": list(stopped.reaped),
    }


def _running(root: Path) -> PlainHost | None:
    """The workspace's running host, found with the standard library; None too when the
    state folder may not be trusted to name it: the launcher's path then refuses the folder
    and says why (`HostFiles.prepare`)."""
    from ..reach.plain_client import StateNotSafe, host_of

    try:
        return host_of(root)
    except StateNotSafe:
        return None


def _start(root: Path, args: argparse.Namespace) -> int:
    from ..host.tcp_address import parse_tcp

    if args.tcp:
        parse_tcp(args.tcp, allow_remote=args.allow_remote)  # refuse before spawning
    host = None if args.tcp else _running(root)
    if host is not None:
        started, record = False, host.record
    else:
        from ..reach import launcher

        handle = launcher.ensure_host(root, tcp=args.tcp, allow_remote=args.allow_remote)
        started, record = handle.started, handle.record.model_dump()
    if args.json:
        # `HostRecord`'s fields in its order, as a host writes them to `host.lock`.
        fields = ("pid", "started_at", "socket", "tcp", "root")
        print(json.dumps({"started": started, **{k: record.get(k) for k in fields}}))
        return 0
    verb = "started" if started else "already running:"
    print(f"host {verb} pid {record['pid']}, socket {record['socket']}")
    if record.get("tcp"):
        print(f"  {record['tcp']}/mcp (token: `habitat host token`)")
    return 0


def _token(root: Path, args: argparse.Namespace) -> int:
    from ..reach.plain_client import HostGone

    host = _running(root)
    answer: dict[str, Any]
    if host is None:
        from ..reach.files import HostFiles
        from ..workspace import Workspace

        files = HostFiles(Workspace.for_project(root))
        files.prepare()  # never write a token into a folder others can read
        token = files.rotate_token() if args.rotate else files.token()
        answer = {"token": token, "rotated": bool(args.rotate), "host_pid": None}
    else:
        try:
            if args.rotate:
                response = host.ask("POST", "/api/host/token", {"rotate": True}, timeout=10)
            else:
                response = host.ask("GET", "/api/host/token", timeout=10)
        except HostGone as exc:
            raise host.silent(exc) from exc
        if response.status == 404:
            raise HabitatError(
                f"the host pid {host.pid} is an older version that cannot show or rotate its "
                "token; restart it: `habitat host stop && habitat host start --tcp …`"
            )
        body = response.data
        if response.status != 200 or not isinstance(body, dict):
            raise HabitatError(f"the host answered /api/host/token with HTTP {response.status}")
        answer = {"token": body["token"], "rotated": body["rotated"], "host_pid": host.pid}
        answer["sessions_revoked"] = body["sessions_revoked"]
    if args.json:
        print(json.dumps(answer))
        return 0
    print(answer["token"])
    if args.rotate:
        where = (
            f"the host pid {host.pid} accepts only this one now"
            if host is not None
            else "no host runs; the next one uses it"
        )
        print(f"rotated: the old token is revoked; {where}", file=sys.stderr)
    return 0


def _status(root: Path, args: argparse.Namespace) -> int:
    from ..reach.files import HostFiles
    from ..reach.plain_client import HostGone, live_host, starting_host
    from ..workspace import Workspace

    # A host that is starting (it holds the lock, no record yet) is waited for: "no host
    # runs" would be untrue a second before it answers.
    host = live_host(HostFiles(Workspace.for_project(root)).lock) or starting_host(root)
    if host is None:
        print("no host runs for this workspace", file=sys.stderr)
        return 1
    try:
        answer = host.ask("GET", "/api/status", timeout=10)
    except HostGone as exc:
        raise HabitatError(f"the host (pid {host.pid}) did not answer: {exc}") from exc
    if answer.status != 200 or not isinstance(answer.data, dict):
        raise HabitatError(f"the host answered /api/status with HTTP {answer.status}")
    status: dict[str, Any] = answer.data
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    running = ", ".join(f"{r['tab']} (pid {r['pid']}): {r['command']}" for r in status["running"])
    tabs = ", ".join(f"{t['name']}={t['state']}" for t in status["tabs"]) or "none"
    print(f"host pid {status['pid']}, up {status['uptime_s']:.0f}s, clients {status['clients']}")
    print(f"  socket {status['socket']}" + (f", tcp {status['tcp']}" if status["tcp"] else ""))
    print(f"  tabs: {tabs}")
    print(f"  running: {running or 'nothing'}")
    for line in warm_lines(status.get("warm", {})):
        print(f"  {line}")
    if status.get("waiting_for_trust"):
        print("  trust: not trusted: nothing of this project has run (`habitat trust` lets it)")
    print(f"  idle exit after {status['idle_seconds']:.0f}s with no client and no run")
    return 0


def warm_lines(warm: dict[str, Any]) -> list[str]:
    """What the host keeps warm, from `/api/status`'s `warm`: the dmypy daemon, language
    servers, the warm pytest; a pytest that runs fresh by decision says so, with why; a
    warm-up still under way comes first, with its steps done and in progress."""
    lines: list[str] = []
    if (up := warm.get("warmup")) is not None:
        doing = ", ".join(up.get("in_progress") or [])
        lines.append(
            f"warm-up: under way (pid {up['pid']}), {up['done']} of {up['steps']} steps done"
            + (f"; in progress: {doing}" if doing else "")
            if up.get("state") == "under way"
            else f"warm-up: pid {up['pid']} ended before it finished"
            f" ({up['done']} of {up['steps']} steps done)"
        )
    dmypy = warm.get("dmypy", {})
    checkers = warm.get("checkers", [])
    pytest = warm.get("pytest", {})
    if dmypy.get("state") == "alive":
        lines.append(f"warm: dmypy daemon (pid {dmypy['pid']})")
    elif not checkers and pytest.get("state") != "warm":
        lines.append(f"warm: nothing (dmypy daemon {dmypy.get('state', 'unknown')})")
    lines += [
        f"warm: {c['tool']} {c.get('kind', 'language server')} (pid {c['pid']}"
        f"{', starting' if c.get('starting') else ''})"
        for c in checkers
    ]
    if pytest.get("state") == "warm":
        lines.append(f"warm: pytest (pid {pytest['pid']}), forked per test run")
    elif pytest.get("state") == "fresh":
        lines.append(f"pytest: fresh ({pytest.get('why')})")
    elif pytest.get("state") in ("failed", "cold", "skipped"):
        lines.append(f"pytest: not warm, {pytest['state']} ({pytest.get('why')})")
    return lines
