"""What the agent reads, in bytes, per MCP shell server, for the same job (issue 25).

Four answers, each measured as it reaches the client: the tool list (`tools/list`, the JSON
of its result), `echo hi`, a red test run (one failing test: ours `verify_run(wait=true)` on
the change, the peers run `./run-tests`, pytest, through their shell tool) and the status
prompt (`prompts/get status`; the peers have none). A tool result counts its text blocks plus
its structured content as compact JSON; "model reads" is what Claude Code, VS Code and Codex
pass on (the structured content when there is one, else the text: docs/result-shape.md).
Each answer is checked for what the job needs (`hi`, the failing test's id and assertion).

    cd bench && ../.venv/bin/python answer_bytes.py [--only habitat mcp-shell-server]

Peers are installed into `.bench-cache/` (bench/peers.py). Table, and JSON in
`bench/results/answer_bytes.json`. Bytes do not depend on load.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
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
CALL_TIMEOUT_SECONDS = 120
PY = sys.executable
SERVERS = ("habitat", "mcp-shell-server", "DesktopCommander")
PASSING = "def test_add_is_wrong():\n    total = 2 + 2\n    assert total == 4, 'two and two'\n"
FAILING = PASSING.replace("== 4", "== 5")
TEST_ID = "proj/test_wrong.py::test_add_is_wrong"
RUN_TESTS = "import sys, pytest\nsys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'proj']))\n"


@dataclass
class Answer:
    job: str
    status: str = "done"
    """done, none (the server has no such answer), error."""
    text_bytes: int = 0
    structured_bytes: int = 0
    reason: str = ""

    @property
    def total_bytes(self) -> int:
        return self.text_bytes + self.structured_bytes

    @property
    def model_bytes(self) -> int:
        return self.structured_bytes or self.text_bytes


@dataclass
class ServerAnswers:
    server: str
    answers: list[Answer] = field(default_factory=list)
    reason: str = ""


def _compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _cost(job: str, result: types.CallToolResult) -> tuple[Answer, str]:
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    data = result.structured_content
    answer = Answer(
        job, text_bytes=len(text.encode()), structured_bytes=_compact(data) if data else 0
    )
    return answer, text + (json.dumps(data, ensure_ascii=False) if data else "")


def _pid(text: str) -> int:
    found = re.search(r"PID (\d+)", text)
    return int(found[1]) if found else 0


def _check(answer: Answer, condition: bool, what: str) -> Answer:
    if not condition:
        answer.status, answer.reason = "error", what
    return answer


def fixture(work: Path) -> None:
    """A git work tree whose change makes one test fail, and `./run-tests` for the peers."""
    script = work / "run-tests"
    script.write_text(f"#!{PY}\n{RUN_TESTS}", encoding="utf-8")
    script.chmod(0o755)
    (work / "proj").mkdir()
    test = work / "proj/test_wrong.py"
    test.write_text(PASSING, encoding="utf-8")
    (work / ".gitignore").write_text(".pytest_cache/\npytest-cache-files-*\n", encoding="utf-8")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *argv], cwd=work, check=True, capture_output=True)
    test.write_text(FAILING, encoding="utf-8")


def server_params(name: str, cache: Path, work: Path, home: Path) -> StdioServerParameters:
    if name == "habitat":
        exe = Path(sys.executable).with_name("habitat")
        env = {
            "HABITAT_HOME": str(home / "habitat-home"),
            "PATH": "/usr/bin:/bin",
            "HABITAT_COALESCE_SECONDS": "0",
        }
        args = ["mcp", "--embedded", "--project", str(work)]
        return StdioServerParameters(command=str(exe), args=args, env=env, cwd=work)
    if name == "mcp-shell-server":
        exe = ensure_mcp_shell_server(cache)
        env = {"ALLOW_COMMANDS": "echo,./run-tests,run-tests"}
        return StdioServerParameters(command=str(exe), env=env, cwd=work)
    node = ensure_node22(cache)
    entry = ensure_desktop_commander(cache)
    env = {"HOME": str(home), "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1", "PATH": "/usr/bin:/bin"}
    return StdioServerParameters(command=str(node), args=[str(entry)], env=env, cwd=work)


async def _shell(client: Client, name: str, work: Path, line: str) -> types.CallToolResult:
    if name == "habitat":
        return await client.call_tool("shell_run", {"command": line})
    if name == "mcp-shell-server":
        return await client.call_tool(
            "shell_execute", {"command": line.split(), "directory": str(work)}
        )
    command = f"cd {work} && {line}"
    return await client.call_tool("start_process", {"command": command, "timeout_ms": 60000})


async def answers_of(name: str, client: Client, work: Path) -> list[Answer]:
    listed = await client.list_tools()
    tools = Answer("tools/list", structured_bytes=0)
    tools.text_bytes = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    tools.reason = f"{len(listed.tools)} tools"
    echo, said = _cost("echo hi", await _shell(client, name, work, "echo hi"))
    out = [tools, _check(echo, "hi" in said, "no `hi` in the answer")]
    if name == "habitat":
        result = await client.call_tool("verify_run", {"wait": True})
    else:
        result = await _shell(client, name, work, "./run-tests")
    red, said = _cost("red test", result)
    if name == "DesktopCommander":  # it may take pytest's dots for a prompt and return early
        for _ in range(5):
            if re.search(r"\d+ (passed|failed)", said) or not (pid := _pid(said)):
                break
            args = {"pid": pid, "timeout_ms": 5000}
            more, text = _cost("red test", await client.call_tool("read_process_output", args))
            red.text_bytes += more.text_bytes
            red.reason = "with read_process_output"
            said += text
    found = TEST_ID.split("::")[1] in said and "assert total == 5" in said
    out.append(_check(red, found, "the failing test or its assertion is missing"))
    prompts = await client.list_prompts() if name == "habitat" else None
    if prompts is not None and any(p.name == "status" for p in prompts.prompts):
        got = await client.get_prompt("status")
        size = len(got.model_dump_json(by_alias=True, exclude_none=True).encode())
        out.append(Answer("status prompt", text_bytes=size))
    else:
        out.append(Answer("status prompt", status="none", reason="no status prompt"))
    return out


async def run_server(name: str, cache: Path, work: Path, home: Path) -> ServerAnswers:
    found = ServerAnswers(name)
    try:
        params = server_params(name, cache, work, home)
    except (PeerUnavailableError, OSError) as exc:
        found.reason = f"unavailable: {exc}"
        return found
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context((home / f"{name}.stderr.log").open("w", encoding="utf-8"))
        transport = stdio_client(params, errlog=cast(TextIO, errlog))
        client = Client(transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT_SECONDS)
        try:
            await stack.enter_async_context(client)
            with anyio.fail_after(CALL_TIMEOUT_SECONDS * 4):
                found.answers = await answers_of(name, client, work)
        except Exception as exc:  # boundary: one server failing must not stop the others
            found.reason = f"error: {type(exc).__name__}: {exc}"
    say(f"{name}: {found.reason or 'done'}")
    return found


def render(results: list[ServerAnswers]) -> None:
    rows = []
    for result in results:
        if not result.answers:
            rows.append([result.server, "-", result.reason, "", "", "", ""])
        for a in result.answers:
            if a.status != "done":
                rows.append([result.server, a.job, a.status, "", "", "", a.reason])
                continue
            sizes = [f"{a.text_bytes:,}", f"{a.structured_bytes:,}", f"{a.total_bytes:,}"]
            rows.append([result.server, a.job, "ok", *sizes, f"{a.model_bytes:,} {a.reason}"])
    columns = ["server", "answer", "status", "text", "structured", "total", "model reads"]
    print_table("bytes the agent reads", columns, rows)


def ratios(results: list[ServerAnswers]) -> dict[str, dict[str, Any]]:
    """Per answer: ours against the leanest peer that gave one (total bytes)."""
    by_job: dict[str, dict[str, int]] = {}
    for result in results:
        for a in result.answers:
            if a.status == "done":
                by_job.setdefault(a.job, {})[result.server] = a.total_bytes
    out: dict[str, dict[str, Any]] = {}
    for job, sizes in by_job.items():
        ours = sizes.get("habitat")
        peers = {k: v for k, v in sizes.items() if k != "habitat"}
        if ours is None or not peers:
            out[job] = {"habitat": ours, "peers": peers}
            continue
        best = min(peers, key=lambda k: peers[k])
        out[job] = {"habitat": ours, "leanest_peer": best, "ratio": round(ours / peers[best], 2)}
    return out


async def run_all(servers: Sequence[str], cache: Path) -> list[ServerAnswers]:
    results = []
    with tempfile.TemporaryDirectory(prefix="answer-bytes-") as tmp:
        for name in SERVERS:
            if name in servers:
                work, home = Path(tmp, name, "work"), Path(tmp, name, "home")
                work.mkdir(parents=True)
                home.mkdir(parents=True)
                fixture(work)
                results.append(await run_server(name, cache, work, home))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", nargs="*", choices=SERVERS, default=list(SERVERS))
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args(argv)
    start = started()
    results = anyio.run(run_all, args.only, args.cache.resolve())
    render(results)
    judged = ratios(results)
    for job, said in judged.items():
        print(f"{job}: {said}")
    path = write_json(
        "answer_bytes",
        {
            **run_meta(start),
            "peers": {
                "mcp-shell-server": MCP_SHELL_SERVER_VERSION,
                "DesktopCommander": DESKTOP_COMMANDER_VERSION,
            },
            "servers": [
                {
                    "server": r.server,
                    "reason": r.reason,
                    "answers": [
                        {**asdict(a), "total_bytes": a.total_bytes, "model_bytes": a.model_bytes}
                        for a in r.answers
                    ],
                }
                for r in results
            ],
            "ratios": judged,
        },
        args.out,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
