from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_habitat.reach import stop_host


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A project folder whose host, if a test started one, is stopped afterwards."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    yield root
    stop_host(root)
