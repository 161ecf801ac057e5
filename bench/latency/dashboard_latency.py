"""From an event published on the host to its row on the dashboard page, in Chromium.

    .venv/bin/python bench/latency/dashboard_latency.py [--probes 60] [--screenshots docs]

A real host on the sample project, the real page in headless Debian chromium (Playwright).
A MutationObserver in the page stamps each event row as it enters the DOM (the page adds
rows in its animation-frame callback, so that is when they are painted); latency is that
stamp minus the event's `ts` (same machine, same clock). Each probe is one foreground
`true` run over the JSON API in a tab of its own, `probe` (the host runs with
`HABITAT_MAX_TABS=9`); its `shell.run.started` and `shell.run.exited` are the events
measured. Rounds:

* idle host, the page on its Tabs view;
* 8 tabs printing at full speed (unthrottled shell loops, bounded in lines), the page on
  its Tabs view following their live tails: the target (issue 14: p95 ≤ 250 ms);
* the same 8 printers, the page on its Events view, which follows no tail: the peer that
  shows what the machine and the browser cost by themselves under that load.

Where the time goes, per event: published → a plain SSE client of the host's `/events`
(the server's part) → the page's EventSource handler (the browser's network and main-thread
queue) → the row in the DOM (the page's rendering). The load average is recorded: on a
shared machine it decides most of it, with what the browser asks of it (the CPU time of
all its processes per second of the round): they run in one session, and the kernel's
autogroup scheduling (on here) gives a session one share of the CPU, as it gives each tab
one; a page that asks for more than that share sees its events queue. `--screenshots DIR`
also saves docs/dashboard-*.png (bench/latency/dashboard_screens.py), the verify views from a real
run on the sample.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from dashboard_screens import load_helpers, sample_project, screenshots

from _report import percentile, print_table, write_json

TARGET_P95_MS = 250.0
PRINTERS = 8
PRINT_LINES = 400_000
ROUND_BOUND_S = 60.0

_OBSERVER = """() => {
  window.__seen = {};
  window.__recv = {};
  new MutationObserver((records) => {
    const now = Date.now();
    for (const r of records) for (const n of r.addedNodes)
      if (n.dataset && n.dataset.eventId) window.__seen[n.dataset.eventId] ??= now;
  }).observe(document.getElementById('event-rows'), {childList: true});
  for (const kind of ["shell.run.started", "shell.run.exited"])
    window.habitatSource.addEventListener(kind, (m) => {
      window.__recv[JSON.parse(m.data).id] ??= Date.now();
    });
}"""


class SseClock:
    """A plain SSE client of the host's `/events`, in a thread: every event and when it
    arrived."""

    def __init__(self, transport: httpx2.HTTPTransport) -> None:
        self.arrived: dict[int, float] = {}
        self.events: dict[int, dict[str, Any]] = {}
        self.changed = threading.Condition()
        self._client = httpx2.Client(transport=transport, base_url="http://localhost")
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        timeout = httpx2.Timeout(10, read=None)
        try:
            with self._client.stream("GET", "/events?since=0", timeout=timeout) as r:
                for line in r.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    now = time.time() * 1000
                    event = json.loads(line[6:])
                    if not event.get("id"):
                        continue
                    with self.changed:
                        self.arrived.setdefault(event["id"], now)
                        self.events[event["id"]] = event
                        self.changed.notify_all()
        except (httpx2.HTTPError, RuntimeError):
            return  # the client was closed at the end of the run

    def last_id(self) -> int:
        with self.changed:
            return max(self.events, default=0)

    def probe_events(self, after: int, count: int) -> list[dict[str, Any]]:
        """The first `count` shell.run.* events of the probe tab after id `after`, once
        they all arrived (bounded)."""

        def found() -> list[dict[str, Any]]:
            return [
                e
                for i, e in sorted(self.events.items())
                if i > after and e.get("tab") == "probe" and e["kind"].startswith("shell.run.")
            ][:count]

        with self.changed:
            if not self.changed.wait_for(lambda: len(found()) >= count, ROUND_BOUND_S):
                raise TimeoutError(f"{count} probe events not seen within {ROUND_BOUND_S} s")
            return found()

    def close(self) -> None:
        self._client.close()


def _habitat(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agent_habitat", *argv], capture_output=True, text=True, check=True
    )
    return done.stdout


def _browser_cpu_s() -> float:
    """CPU seconds so far of this process's chromium processes (all of them: the page's
    renderer, the GPU and network processes, the browser): what the page costs the machine."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            if "chrom" in child.name():
                times = child.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue  # a helper process that ended meanwhile
    return total


def _probe_round(
    page: Any, api: httpx2.Client, sse: SseClock, probes: int
) -> dict[str, list[float]]:
    cpu, start = _browser_cpu_s(), time.monotonic()
    page.evaluate(_OBSERVER)
    after = sse.last_id()
    for _ in range(probes):
        api.post("/api/shell_run", json={"command": "true", "tab": "probe"}).raise_for_status()
    events = sse.probe_events(after, 2 * probes)
    ids = [e["id"] for e in events]
    ts = {e["id"]: e["ts"] * 1000 for e in events}
    page.wait_for_function(
        "(ids) => ids.every((id) => window.__seen[id])",
        arg=ids,
        timeout=ROUND_BOUND_S * 1000,
    )
    seen: dict[str, float] = page.evaluate("window.__seen")
    recv: dict[str, float] = page.evaluate("window.__recv")
    return {
        "sse": [sse.arrived[i] - ts[i] for i in ids],
        "received": [recv[str(i)] - ts[i] for i in ids if str(i) in recv],
        "row": [seen[str(i)] - ts[i] for i in ids],
        "browser_cpu_ms_per_s": [1000 * (_browser_cpu_s() - cpu) / (time.monotonic() - start)],
    }


def _stats(name: str, parts: dict[str, list[float]]) -> dict[str, Any]:
    values = parts["row"]
    out: dict[str, Any] = {
        "round": name,
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(percentile(values, 0.95), 1),
        "max_ms": round(max(values), 1),
        "load_average_1m": round(os.getloadavg()[0], 1),
        "browser_cpu_ms_per_s": round(parts["browser_cpu_ms_per_s"][0]),
    }
    for part in ("sse", "received"):
        if parts[part]:
            out[f"{part}_p50_ms"] = round(statistics.median(parts[part]), 1)
            out[f"{part}_p95_ms"] = round(percentile(parts[part], 0.95), 1)
    return out


def _show(page: Any, view: str) -> None:
    page.get_by_role("tab", name=view).click()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=60)
    parser.add_argument("--screenshots", type=Path, metavar="DIR")
    args = parser.parse_args()
    helpers = load_helpers()
    chromium, why = helpers.chromium_path()
    if chromium is None:
        print(f"bench: {why}", file=sys.stderr)
        return 2
    from playwright.sync_api import expect, sync_playwright

    shots: list[str] = []
    with tempfile.TemporaryDirectory(prefix="habitat-dash-") as tmp:
        os.environ["HABITAT_HOME"] = str(Path(tmp) / "home")
        os.environ["HABITAT_MAX_TABS"] = str(PRINTERS + 1)  # the printers and the probe tab
        repo = sample_project(Path(tmp) / "calc")
        url = json.loads(_habitat("dashboard", "--project", str(repo), "--no-browser", "--json"))[
            "url"
        ]
        record = json.loads(_habitat("host", "status", "--project", str(repo), "--json"))
        transport = httpx2.HTTPTransport(uds=record["socket"])
        rounds: list[dict[str, Any]] = []
        try:
            with (
                httpx2.Client(transport=transport, base_url="http://localhost", timeout=60) as api,
                sync_playwright() as pw,
            ):
                sse = SseClock(transport)
                browser = pw.chromium.launch(executable_path=chromium)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url)
                expect(page.locator("#conn")).to_have_text("live", timeout=30_000)
                rounds.append(_stats("idle host", _probe_round(page, api, sse, args.probes)))
                loop = f'for i in $(seq 1 {PRINT_LINES}); do echo "line $i of output"; done'
                for n in range(PRINTERS):
                    api.post(
                        "/api/shell_run",
                        json={"command": loop, "tab": f"print{n + 1}", "background": True},
                    ).raise_for_status()
                printing = f"{PRINTERS} tabs printing, Tabs view"
                rounds.append(_stats(printing, _probe_round(page, api, sse, args.probes)))
                _show(page, "Events")
                printing = f"{PRINTERS} tabs printing, Events view (peer)"
                rounds.append(_stats(printing, _probe_round(page, api, sse, args.probes)))
                _show(page, "Tabs")
                running = sum(
                    t["state"] == "running" for t in api.post("/api/shell_scene").json()["tabs"]
                )
                for r in rounds[1:]:
                    r["printers_still_running_at_end"] = running
                if args.screenshots:
                    shots = screenshots(page, api, repo, args.screenshots, PRINTERS)
                for n in range(PRINTERS):
                    api.post("/api/shell_kill", json={"tab": f"print{n + 1}"})
                sse.close()
                browser.close()
        finally:
            _habitat("host", "stop", "--project", str(repo))
    print_table(
        f"event published → page row (target p95 ≤ {TARGET_P95_MS:.0f} ms); p50 / p95 ms",
        [
            "round",
            "events",
            "→ SSE client",
            "→ page handler",
            "→ row in DOM",
            "browser CPU ms/s",
            "load 1m",
        ],
        [
            [
                r["round"],
                str(r["n"]),
                f"{r['sse_p50_ms']} / {r['sse_p95_ms']}",
                f"{r.get('received_p50_ms', '–')} / {r.get('received_p95_ms', '–')}",
                f"{r['p50_ms']} / {r['p95_ms']}",
                str(r["browser_cpu_ms_per_s"]),
                str(r["load_average_1m"]),
            ]
            for r in rounds
        ],
    )
    ok = all(r["p95_ms"] <= TARGET_P95_MS for r in rounds[:2])
    path = write_json(
        "dashboard_latency",
        {"target_p95_ms": TARGET_P95_MS, "met": ok, "rounds": rounds, "screenshots": shots},
    )
    print(f"wrote {path}" + ("" if ok else " — target NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
