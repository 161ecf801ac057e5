"""The official MCP conformance suite's generic server scenarios against the host's /mcp.

Runs `bench/conformance.py` (which installs Node 22 and the suite into `.bench-cache/`);
skipped, saying why, when they cannot be installed here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "conformance.py"
UNAVAILABLE = 3


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("conformance") / "results.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    if done.returncode == UNAVAILABLE:
        pytest.skip(f"conformance suite not run: {done.stderr.strip().splitlines()[-1]}")
    assert out.exists(), done.stdout + done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    return {r["scenario"]: r for r in data["results"]}


@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    "scenario",
    [
        "server-initialize",
        "ping",
        "tools-list",
        "prompts-list",
        "resources-list",
        "dns-rebinding-protection",
        pytest.param(
            "logging-set-level",
            marks=pytest.mark.xfail(
                strict=True,
                reason="the primary server has no logging/setLevel handler (mcp_tools/server.py)",
            ),
        ),
    ],
)
def test_the_generic_conformance_scenario_passes(
    results: dict[str, dict[str, Any]], scenario: str
) -> None:
    result = results[scenario]
    assert result["passed"] is True, result.get("output", result["detail"])


def test_scenarios_the_pinned_suite_lacks_are_reported_not_passed(
    results: dict[str, dict[str, Any]],
) -> None:
    # server-session-lifecycle is not in conformance 0.1.16: say so, never count it green.
    assert results["server-session-lifecycle"]["passed"] is None
