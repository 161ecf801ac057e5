"""Three agent jobs side by side: calls and bytes (text, structured) per MCP shell server.

Each server is driven the best way its own tools allow, and every job checks that it was
really done (the page was fetched, the error line found, the verdict read):

* dev server — start it in the background, wait until it says ready, fetch a page from it,
  read its log, stop it;
* build — run a build that prints ~200 kB (one error line in the middle, a verdict at the
  end), then find the error line;
* green — "is my change green?": the project's tests; ours through `verify_run(wait=true)`
  (lint, types and the affected tests on the change), the peers run the test command.

"Model reads" is what the four clients we checked hand the model (docs/result-shape.md): the
structured content when a result has it, else the text. Peers are installed into
`.bench-cache/` (see bench/peers.py); `--only` picks servers.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO, cast

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import print_table, run_meta, started, write_json
from peers import (
    DESKTOP_COMMANDER_VERSION,
    MCP_SHELL_SERVER_VERSION,
    PeerUnavailableError,
    ensure_desktop_commander,
    ensure_mcp_shell_server,
    ensure_node22,
    say,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO_ROOT / ".bench-cache"
CALL_TIMEOUT_SECONDS = 60
PY = sys.executable

DEV_SERVER = """\
import http.server, time
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from the dev server\\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, fmt, *args):
        print("GET", self.path, flush=True)
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print("compiling assets...", flush=True)
time.sleep(0.5)
print(f"ready on http://127.0.0.1:{server.server_address[1]}/", flush=True)
server.serve_forever()
"""

BUILD = """\
import sys  # run as ./build: the peers refuse interpreters (mcp-shell-server) but run a build
for i in range(1, 5001):
    print(f"[{i:4}/5000] compiling src/module_{i:04}.c ... ok")
    if i == 2500:
        print("src/module_2500.c:17:5: error: expected ';' before '}' token")
print("build failed: 1 error")
sys.exit(1)
"""
ERROR_LINE = "src/module_2500.c:17:5: error: expected ';' before '}' token"

TEST_FILE = "def test_the_change():\n    assert 1 + 1 == 2\n"
RUN_TESTS = "import sys, pytest\nsys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'proj']))\n"


@dataclass
class CallCost:
    tool: str
    text_bytes: int
    structured_bytes: int

    @property
    def model_bytes(self) -> int:
        return self.structured_bytes or self.text_bytes


@dataclass
class JobRun:
    server: str
    job: str
    status: str = "done"
    """done, cannot (the server's tools cannot do the job), error."""
    reason: str = ""
    calls: list[CallCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        text = sum(c.text_bytes for c in self.calls)
        structured = sum(c.structured_bytes for c in self.calls)
        return {
            "calls": len(self.calls),
            "text_bytes": text,
            "structured_bytes": structured,
            "total_bytes": text + structured,
            "model_bytes": sum(c.model_bytes for c in self.calls),
        }


class JobFailedError(Exception):
    """The job's check failed: the server did not do what the job needs."""


class Driver:
    """One connected server; `call` records what each result costs."""

    def __init__(self, client: Client, run: JobRun) -> None:
        self.client = client
        self.run = run

    async def call(
        self, tool: str, arguments: dict[str, Any], *, error_ok: bool = False
    ) -> tuple[str, dict[str, Any]]:
        """`error_ok`: a tool error is the expected answer (mcp-shell-server's failing build)."""
        result = await self.client.call_tool(tool, arguments)
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        data = result.structured_content
        size = len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
        self.run.calls.append(CallCost(tool, len(text.encode()), size if data else 0))
        if result.is_error and not error_ok:
            raise JobFailedError(f"{tool} returned an error: {text[:300]}")
        return text, data or {}


Job = Callable[[Driver, Path], Awaitable[None]]


def _cursor(result: dict[str, Any]) -> int:
    # Left out when it equals `output_bytes`, which is left out when it is the size of the
    # output shown (docs/result-shape.md).
    size = result.get("output_bytes", len(result.get("output", "").encode()))
    return int(result.get("cursor", size))


def check(condition: bool, what: str) -> None:
    if not condition:
        raise JobFailedError(what)


# --- habitat -----------------------------------------------------------------------------


async def habitat_dev(d: Driver, work: Path) -> None:
    # Like DesktopCommander's start_process(timeout_ms): return after a while with the output
    # so far; only if it is not ready by then, wait for it (shell_wait returns on the match).
    start = {"command": "./dev-server", "tab": "web", "yield_after_seconds": 3}
    _, ran = await d.call("shell_run", start)
    found = re.search(r"ready on (\S+)", ran["output"])
    cursor = _cursor(ran)
    if found is None:
        _, waited = await d.call("shell_wait", {"tab": "web", "until": r"ready on \S+"})
        found = re.search(r"ready on (\S+)", waited["output"])
        cursor = _cursor(waited)
    check(found is not None, "never ready")
    assert found is not None
    _, page = await d.call("shell_run", {"command": f"curl -s {found[1]}", "tab": "check"})
    check("hello from the dev server" in page["output"], "page not fetched")
    _, log = await d.call("shell_last", {"tab": "web", "since": cursor})
    check("GET /" in log["output"], "the request is not in the log")
    _, killed = await d.call("shell_kill", {"tab": "web"})
    check(killed["killed"] and not killed.get("remaining"), "not stopped")


async def habitat_build(d: Driver, work: Path) -> None:
    _, ran = await d.call("shell_run", {"command": "./build", "tab": "build"})
    check(ran["exit_code"] == 1, "the build did not fail")
    # A failed run's error-looking lines from the part left out come with it (error_lines);
    # else the error is one grep away.
    if ERROR_LINE not in ran["output"] and ERROR_LINE not in ran.get("error_lines", []):
        _, grep = await d.call("shell_last", {"tab": "build", "grep": r"error:"})
        check(ERROR_LINE in grep["output"], "error line not found")


async def habitat_green(d: Driver, work: Path) -> None:
    d.run.notes.append("through verify_run(wait=true)")
    _, status = await d.call("verify_run", {"wait": True})
    check(status.get("green") is True, f"not green: {status}")


# --- mcp-shell-server (argv lists, foreground only) ----------------------------------------


async def shell_server_dev(d: Driver, work: Path) -> None:
    raise PeerUnavailableError("shell_execute waits for the command to exit: no background runs")


async def shell_server_build(d: Driver, work: Path) -> None:
    args = {"command": ["./build"], "directory": str(work)}
    text, _ = await d.call("shell_execute", args, error_ok=True)  # exit 1 is a tool error
    check(ERROR_LINE in text, "error line not in the output")


async def shell_server_green(d: Driver, work: Path) -> None:
    text, _ = await d.call("shell_execute", {"command": ["./run-tests"], "directory": str(work)})
    check("1 passed" in text, "not green")


# --- DesktopCommander (shell command strings, pids) ----------------------------------------


def _pid(text: str) -> int:
    found = re.search(r"PID (\d+)", text)
    if found is None:
        raise JobFailedError(f"no pid in {text[:200]!r}")
    return int(found[1])


async def dc_dev(d: Driver, work: Path) -> None:
    start = {"command": f"cd {work} && ./dev-server", "timeout_ms": 3000}
    text, _ = await d.call("start_process", start)
    pid = _pid(text)
    seen = text
    for _ in range(5):  # its start_process returns at the timeout; then read until ready
        if re.search(r"ready on \S+", seen):
            break
        more, _ = await d.call("read_process_output", {"pid": pid, "timeout_ms": 3000})
        seen += more
    found = re.search(r"ready on (http\S+?)/?\s", seen)
    check(found is not None, "never ready")
    assert found is not None
    page, _ = await d.call("start_process", {"command": f"curl -s {found[1]}/", "timeout_ms": 5000})
    check("hello from the dev server" in page, "page not fetched")
    log, _ = await d.call("read_process_output", {"pid": pid, "timeout_ms": 1000})
    check("GET /" in log, "the request is not in the log")
    await d.call("force_terminate", {"pid": pid})


async def dc_build(d: Driver, work: Path) -> None:
    start = {"command": f"cd {work} && ./build", "timeout_ms": 20000}
    text, _ = await d.call("start_process", start)
    if ERROR_LINE not in text:
        more, _ = await d.call("read_process_output", {"pid": _pid(text), "offset": 2400})
        text += more
    check(ERROR_LINE in text, "error line not found")


async def dc_green(d: Driver, work: Path) -> None:
    command = f"cd {work} && ./run-tests"
    text, _ = await d.call("start_process", {"command": command, "timeout_ms": 30000})
    for _ in range(5):  # it may take pytest's progress dots for a prompt and return early
        if re.search(r"\d+ (passed|failed)", text):
            break
        more, _ = await d.call("read_process_output", {"pid": _pid(text), "timeout_ms": 5000})
        text += more
    check("1 passed" in text, f"not green: {text[:300]!r}")


JOBS: dict[str, dict[str, Job]] = {
    "habitat": {"dev server": habitat_dev, "build": habitat_build, "green": habitat_green},
    "mcp-shell-server": {
        "dev server": shell_server_dev,
        "build": shell_server_build,
        "green": shell_server_green,
    },
    "DesktopCommander": {"dev server": dc_dev, "build": dc_build, "green": dc_green},
}


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!{PY}\n{body}", encoding="utf-8")
    path.chmod(0o755)


def fixture(work: Path) -> None:
    """`./dev-server`, `./build` and `./run-tests` as executables: the same command for all."""
    _script(work / "dev-server", DEV_SERVER)
    _script(work / "build", BUILD)
    _script(work / "run-tests", RUN_TESTS)
    proj = work / "proj"
    proj.mkdir()
    test = proj / "test_change.py"
    test.write_text(TEST_FILE.replace("1 + 1", "2"), encoding="utf-8")
    # pytest writes its cache through a temporary `pytest-cache-files-*` folder; a project
    # ignores both (else a finished epoch goes stale on the cache pytest itself wrote).
    (work / ".gitignore").write_text(".pytest_cache/\npytest-cache-files-*\n", encoding="utf-8")
    # A git work tree with a change in it: what "is my change green?" asks about.
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *argv], cwd=work, check=True, capture_output=True)
    test.write_text(TEST_FILE, encoding="utf-8")


def server_params(name: str, cache: Path, work: Path, home: Path) -> StdioServerParameters:
    if name == "habitat":
        exe = Path(sys.executable).with_name("habitat")
        env = {"HABITAT_HOME": str(home / "habitat-home"), "PATH": "/usr/bin:/bin"}
        return StdioServerParameters(
            command=str(exe), args=["mcp", "--embedded", "--project", str(work)], env=env, cwd=work
        )
    if name == "mcp-shell-server":
        exe = ensure_mcp_shell_server(cache)
        return StdioServerParameters(
            command=str(exe),
            env={"ALLOW_COMMANDS": "./build,./run-tests,build,run-tests"},
            cwd=work,
        )
    node = ensure_node22(cache)
    entry = ensure_desktop_commander(cache)
    env = {"HOME": str(home), "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1", "PATH": "/usr/bin:/bin"}
    return StdioServerParameters(command=str(node), args=[str(entry)], env=env, cwd=work)


async def run_server(name: str, cache: Path, work: Path, home: Path) -> list[JobRun]:
    runs = [JobRun(name, job) for job in JOBS[name]]
    try:
        params = server_params(name, cache, work, home)
    except (PeerUnavailableError, OSError) as exc:
        for run in runs:
            run.status, run.reason = "unavailable", str(exc)
        return runs
    log = home / f"{name}.stderr.log"
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(log.open("w", encoding="utf-8"))
        transport = stdio_client(params, errlog=cast(TextIO, errlog))
        client = Client(transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT_SECONDS)
        await stack.enter_async_context(client)
        say(f"{name}: connected (stderr in {log})")
        for run in runs:
            try:
                with anyio.fail_after(CALL_TIMEOUT_SECONDS * 4):
                    await JOBS[name][run.job](Driver(client, run), work)
            except PeerUnavailableError as exc:
                run.status, run.reason = "cannot", str(exc)
            except Exception as exc:  # boundary: one failed job must not stop the others
                run.status, run.reason = "error", f"{type(exc).__name__}: {exc}"
            say(f"{name}: {run.job}: {run.status} {run.reason}")
    return runs


def verdicts(runs: list[JobRun]) -> dict[str, dict[str, Any]]:
    """Per job: ours against the leanest peer that completed it (calls and total bytes)."""
    out: dict[str, dict[str, Any]] = {}
    for job in JOBS["habitat"]:
        ours = next((r for r in runs if r.server == "habitat" and r.job == job), None)
        peers = [r for r in runs if r.server != "habitat" and r.job == job and r.status == "done"]
        if ours is None or ours.status != "done" or not peers:
            out[job] = {"met": None, "why": "ours or every peer did not complete it"}
            continue
        mine = ours.totals()
        calls = min(p.totals()["calls"] for p in peers)
        total = min(p.totals()["total_bytes"] for p in peers)
        model = min(p.totals()["model_bytes"] for p in peers)
        out[job] = {
            "leanest_peer_calls": calls,
            "leanest_peer_total_bytes": total,
            "leanest_peer_model_bytes": model,
            "calls_met": mine["calls"] <= calls,
            "total_bytes_met": mine["total_bytes"] <= total,
            "model_bytes_met": mine["model_bytes"] <= model,
        }
    return out


def render(runs: list[JobRun], judged: dict[str, dict[str, Any]]) -> None:
    rows = []
    for run in runs:
        t = run.totals()
        status = run.status if not run.reason else f"{run.status}: {run.reason[:60]}"
        rows.append(
            [
                run.job,
                run.server,
                status,
                str(t["calls"]),
                f"{t['text_bytes']:,}",
                f"{t['structured_bytes']:,}",
                f"{t['total_bytes']:,}",
                f"{t['model_bytes']:,}",
            ]
        )
    columns = ["job", "server", "status", "calls", "text", "structured", "total", "model reads"]
    print_table("agent jobs: calls and bytes per server", columns, rows)
    for job, verdict in judged.items():
        print(f"{job}: {verdict}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", nargs="*", choices=sorted(JOBS), default=sorted(JOBS))
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    return parser.parse_args(argv)


async def run_all(servers: Sequence[str], cache: Path) -> list[JobRun]:
    runs: list[JobRun] = []
    with tempfile.TemporaryDirectory(prefix="agent-jobs-") as tmp:
        for name in ("habitat", "mcp-shell-server", "DesktopCommander"):
            if name not in servers:
                continue
            work = Path(tmp, name, "work")
            home = Path(tmp, name, "home")
            work.mkdir(parents=True)
            home.mkdir(parents=True)
            fixture(work)
            runs += await run_server(name, cache, work, home)
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = started()
    runs = anyio.run(run_all, args.only, args.cache.resolve())
    judged = verdicts(runs)
    render(runs, judged)
    path = write_json(
        "agent_jobs",
        {
            **run_meta(start),
            "peers": {
                "mcp-shell-server": MCP_SHELL_SERVER_VERSION,
                "DesktopCommander": DESKTOP_COMMANDER_VERSION,
            },
            "runs": [{**asdict(r), "totals": r.totals()} for r in runs],
            "verdicts": judged,
        },
        args.out,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
