from __future__ import annotations

from pathlib import Path

import pytest


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
