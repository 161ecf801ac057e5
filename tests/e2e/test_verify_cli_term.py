"""`habitat verify` stopped by SIGTERM (`timeout`, a harness, a supervisor) stops what it
started: the rung's process does not run on after the CLI, as it did when Python's default
was to die at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify import stop_type_daemon

pytestmark = pytest.mark.e2e

HABITAT = Path(sys.executable).parent / "habitat"


@pytest.fixture
def calc(tmp_path: Path) -> Iterator[Path]:
    root = build_sample(tmp_path / "calc")
    yield root
    anyio.run(stop_type_daemon, root)


def _rung_process(cli: subprocess.Popen[bytes], within: float) -> psutil.Process:
    parent = psutil.Process(cli.pid)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for child in parent.children(recursive=True):
            try:
                if "pytest" in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        assert cli.poll() is None, "the verify ended before its rung started"
        psutil.wait_procs([parent], timeout=0.05)  # a bounded pause between looks
    raise AssertionError(f"no pytest process under the verify within {within} s")


def test_sigterm_cancels_the_verify_and_kills_its_rung(calc: Path) -> None:
    (calc / "tests/test_slow.py").write_text(
        "import threading\n\n\ndef test_slow() -> None:\n    threading.Event().wait()\n",
        encoding="utf-8",
    )
    cli = subprocess.Popen(
        [str(HABITAT), "verify", "--project", str(calc), "--rung", "test.full", "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        rung = _rung_process(cli, within=120)
        cli.send_signal(signal.SIGTERM)
        # 130 once the cancellation ran; on a loaded machine the grace (TERM_GRACE_SECONDS)
        # can end first, and then the CLI kills what it started and exits 128 + SIGTERM.
        assert cli.wait(timeout=60) in (130, 128 + signal.SIGTERM)
        _, alive = psutil.wait_procs([rung], timeout=30)
        assert not alive, f"the rung outlived the CLI: {alive}"
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
