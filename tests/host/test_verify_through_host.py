"""`habitat verify`, `status` and `cancel` go to the runner of the workspace host when one
serves the workspace. One contract either way: `verify` blocks until the verdict and exits
with it, `--background` exits 5 (queued, never 0), `--json` prints the same shape, and bad
configuration exits 2."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_habitat.cli import main
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.reach import ensure_host, find_host, stop_host
from agent_habitat.testing import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def calc(tmp_path: Path) -> Iterator[Path]:
    root = build_sample(tmp_path / "calc")
    text = root / "src/calc/text.py"  # a change to verify: a clean tree has nothing to verify
    text.write_text(text.read_text(encoding="utf-8") + "X = 1\n", encoding="utf-8")
    yield root
    stop_host(root)


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = await anyio.to_thread.run_sync(main, list(argv))
    return code, json.loads(capsys.readouterr().out)


def _names(result: dict[str, Any]) -> list[str]:
    return [str(rung["rung"]) for rung in result["rungs"]]


def _break(root: Path) -> None:
    text = root / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "import os\n", encoding="utf-8")  # F401


async def test_verify_through_the_host_blocks_until_the_verdict_and_exits_with_it(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = (await anyio.to_thread.run_sync(ensure_host, calc)).record
    p = str(calc)
    code, green = await cli(capsys, "verify", "--policy", "minimal", "--json", "--project", p)
    assert (code, green["state"]) == (0, "green"), green
    timing = green["timing"]
    assert isinstance(timing, dict)
    assert timing["wall_s"] >= timing["rungs_s"] > 0
    _break(calc)
    # The bug this guards: with a host running a red change exited 0, so
    # `habitat verify && git commit` committed broken code.
    code, red = await cli(capsys, "verify", "--policy", "minimal", "--json", "--project", p)
    assert (code, red["state"]) == (1, "red"), red
    code, status = await cli(capsys, "status", "--json", "--project", p)
    assert (code, status["green"]) == (1, False), status
    epoch = status["epoch"]
    assert isinstance(epoch, dict)
    assert epoch["task"] == red["id"]  # the host climbed it: its runner has the epoch
    assert find_host(calc) == record  # the same host all along


async def test_background_queues_on_the_host_and_exits_5_never_0(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = str(calc)
    _break(calc)
    # No host runs: --background starts one (the verify must run somewhere after we exit).
    code, ticket = await cli(
        capsys, "verify", "--background", "--policy", "minimal", "--json", "--project", p
    )
    assert code == 5
    assert ticket["state"] in ("queued", "running")
    assert ticket["result"] is None
    assert find_host(calc) is not None

    async def ended() -> bool:
        code = await anyio.to_thread.run_sync(main, ["status", "--json", "--project", p])
        status = json.loads(capsys.readouterr().out)
        epoch = status["epoch"]
        return code == 1 and isinstance(epoch, dict) and epoch["state"] == "red"

    await eventually(ended, within=60)
    code, cancelled = await cli(capsys, "cancel", "--json", "--project", p)
    assert (code, cancelled["cancelled"]) == (0, False)  # nothing was running any more


async def test_verify_json_has_one_shape_with_and_without_a_host(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = str(calc)
    args = ("verify", "--policy", "minimal", "--json", "--project", p)
    code, alone = await cli(capsys, *args)
    assert code == 0
    assert find_host(calc) is None  # a script with no host climbs here, starting none
    await anyio.to_thread.run_sync(ensure_host, calc)
    code, hosted = await cli(capsys, *args)
    assert code == 0
    assert hosted.keys() == alone.keys()
    assert hosted["snapshot"] == alone["snapshot"]
    assert hosted["touched"] == alone["touched"]
    assert _names(hosted) == _names(alone)
    code, oneshot = await cli(capsys, *args, "--no-host")  # one-shot, a host running or not
    assert code == 0
    assert oneshot.keys() == alone.keys()
    assert oneshot["id"] != hosted["id"]


@pytest.mark.parametrize("hosted", [False, True], ids=["one-shot", "through-the-host"])
async def test_bad_configuration_exits_2_naming_the_key(
    calc: Path, capsys: pytest.CaptureFixture[str], hosted: bool
) -> None:
    if hosted:
        await anyio.to_thread.run_sync(ensure_host, calc)
    pyproject = calc / "pyproject.toml"
    bad = '\n[tool.habitat]\npolicy = "sometimes"\n'
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + bad, encoding="utf-8")
    code = await anyio.to_thread.run_sync(main, ["verify", "--json", "--project", str(calc)])
    error = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert code == 2
    assert "policy" in error["error"]


async def test_in_a_terminal_verify_starts_the_workspace_host_and_the_next_one_reuses_it(
    calc: Path,
) -> None:
    leader, follower = pty.openpty()
    try:

        def verify() -> subprocess.CompletedProcess[bytes]:
            argv = [sys.executable, "-m", "agent_habitat", "verify", "--policy", "minimal"]
            return subprocess.run(
                [*argv, "--json", "--project", str(calc)],
                stdin=follower,
                stdout=subprocess.PIPE,
                stderr=follower,
                env={k: v for k, v in os.environ.items() if k != "CI"},
                timeout=120,
                check=False,
            )

        first = await anyio.to_thread.run_sync(verify)
        assert first.returncode == 0, first.stdout
        record = find_host(calc)
        assert record is not None  # started for the person at the terminal
        os.set_blocking(leader, False)
        shown = os.read(leader, 1 << 16).decode("utf-8", "replace")
        assert "started the workspace host" in shown
        assert "rungs" in shown  # the live line while it climbed
        second = await anyio.to_thread.run_sync(verify)
        assert second.returncode == 0
        assert find_host(calc) == record
        assert json.loads(second.stdout)["state"] == "green"
    finally:
        os.close(leader)
        os.close(follower)


async def test_sigterm_during_a_verify_through_the_host_cancels_it_there_and_exits_130(
    calc: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    await anyio.to_thread.run_sync(ensure_host, calc)
    started = tmp_path / "started"
    (calc / "tests/test_never_ends.py").write_text(
        "import pathlib, threading\n\n\ndef test_never_ends():\n"
        f"    pathlib.Path({str(started)!r}).write_text('x')\n"
        "    threading.Event().wait()\n",
        encoding="utf-8",
    )
    argv = [sys.executable, "-m", "agent_habitat", "verify", "--rung", "test.scoped"]
    proc = await anyio.to_thread.run_sync(
        lambda: subprocess.Popen(
            [*argv, "--json", "--project", str(calc)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    )
    try:
        await eventually(started.exists, within=120)
        proc.terminate()
        _, err = await anyio.to_thread.run_sync(lambda: proc.communicate(timeout=60))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert b"cancelled" in err
    code, status = await cli(capsys, "status", "--json", "--project", str(calc))
    assert code == 1
    assert status["epoch"]["state"] == "cancelled", status


async def test_a_host_started_after_a_verify_reports_that_epoch_not_never_verified(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The epoch is on record (state.db); a host started later knows only what it climbed
    # itself. It said "never verified" (xxhash v2.3.0: a red epoch 19, the host restarted
    # by `habitat dashboard`, and the page and `habitat status` said never verified).
    p = str(calc)
    _break(calc)
    code, red = await cli(
        capsys, "verify", "--no-host", "--policy", "minimal", "--json", "--project", p
    )
    assert (code, red["state"]) == (1, "red"), red
    await anyio.to_thread.run_sync(ensure_host, calc)
    code, status = await cli(capsys, "status", "--json", "--project", p)
    assert code == 1, status
    assert status["epoch"] is not None, status
    assert (status["epoch"]["task"], status["epoch"]["state"]) == (red["id"], "red")
    assert status["served_by"].startswith("the workspace host"), status
    text = calc / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "Y = 2\n", encoding="utf-8")
    code, stale = await cli(capsys, "status", "--json", "--project", p)
    assert (code, stale["epoch"]["state"], stale["stale"]) == (1, "stale", True), stale
