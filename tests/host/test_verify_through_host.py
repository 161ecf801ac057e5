"""`habitat verify`, `status` and `cancel` go to the runner of the workspace host when one
serves the workspace: the verify is handed over and outlives the CLI process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_habitat.cli import main
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.host import ensure_host, stop_host

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def calc(tmp_path: Path) -> Iterator[Path]:
    root = build_sample(tmp_path / "calc")
    text = root / "src/calc/text.py"  # a change to verify: a clean tree has nothing to verify
    text.write_text(text.read_text(encoding="utf-8") + "X = 1\n", encoding="utf-8")
    yield root
    stop_host(root)


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = await anyio.to_thread.run_sync(main, list(argv))
    return code, json.loads(capsys.readouterr().out)


async def test_verify_is_handed_to_the_host_and_status_is_the_runners_answer(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await anyio.to_thread.run_sync(ensure_host, calc)
    p = str(calc)
    code, handed = await cli(capsys, "verify", "--policy", "minimal", "--json", "--project", p)
    assert code == 0
    assert handed["task"]
    assert handed["result"] is None  # returned at once with its task
    code, waited = await cli(
        capsys, "verify", "--policy", "minimal", "--wait", "--json", "--project", p
    )
    assert waited["state"] == "green", waited
    assert code == 0
    code, status = await cli(capsys, "status", "--json", "--project", p)
    assert (code, status["green"]) == (0, True), status
    (calc / "src/calc/text.py").write_text("Y = 2\n", encoding="utf-8")
    code, status = await cli(capsys, "status", "--json", "--project", p)
    assert (code, status["green"], status["stale"]) == (1, False, True), status
    code, cancelled = await cli(capsys, "cancel", "--json", "--project", p)
    assert code == 0
    assert cancelled["cancelled"] is False  # nothing was running any more
