from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import wheel_venv

# bench/'s helpers the tests share (the dashboard's browser, the gauntlet and its malformed
# lines) are imported from there: tests may import bench, bench never imports tests.
_BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path[:0] = [str(_BENCH / "latency"), str(_BENCH / "gauntlet"), str(_BENCH)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def habitat_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state folder; nothing touches the real ~/.local/state."""
    home = tmp_path_factory.mktemp("habitat-home")
    monkeypatch.setenv("HABITAT_HOME", str(home))
    # A warm-up starts dmypy and ruff for every project a test opens; its tests turn it on.
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "false")
    # No test downloads a type checker from PyPI unless it says so (test_verify_pyright.py).
    monkeypatch.setenv("HABITAT_LADDER_FETCH_CHECKERS", "false")
    return home


@pytest.fixture(scope="session", autouse=True)
def wheel_venv_early(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The wheel tests' venv is mostly a wait on PyPI: started with the session, in the
    background, when the wheel tests are selected (`wheel_venv`)."""
    if not wheel_venv.wanted(request.session.items):
        yield
        return
    builder = wheel_venv.start(wheel_venv.folder_of(tmp_path_factory.getbasetemp()))
    yield
    if builder is not None:
        session = request.session
        if not (session.shouldstop or session.shouldfail):  # a wheel test may still need it
            try:
                builder.wait(timeout=wheel_venv.INSTALL_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        builder.kill()
        builder.wait()
