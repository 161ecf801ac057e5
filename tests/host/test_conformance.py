"""The official MCP conformance suite (generic and 2026 fixture-free scenarios) against /mcp.

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
        [sys.executable, str(SCRIPT), "--with-2026", "--json", str(out)],
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


def known_failure(scenario: str, reason: str) -> Any:
    return pytest.param(scenario, marks=pytest.mark.xfail(strict=True, reason=reason))


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
        "server-session-lifecycle",
        "sep-2164-resource-not-found",
        "logging-set-level",
        known_failure(
            "server-stateless",
            "sep-2575 needs a fixture tool `test_missing_capability` the server does not have",
        ),
        known_failure(
            "caching",
            "no resources/templates/list handler, so no ttlMs/cacheScope hints (mcp_tools)",
        ),
        known_failure(
            "http-header-validation",
            "the suite drops the URL's query on these requests, so `?token=` is lost: 401",
        ),
    ],
)
def test_the_conformance_scenario_passes(results: dict[str, dict[str, Any]], scenario: str) -> None:
    result = results[scenario]
    assert result["passed"] is True, result.get("output", result["detail"])
