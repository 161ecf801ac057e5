"""verify/command.py: what the rung processes share."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.verify.command import take_report

pytestmark = pytest.mark.anyio


async def test_a_report_is_read_once_and_removed(tmp_path: Path) -> None:
    report = tmp_path / "ruff.json"
    report.write_text("[]", encoding="utf-8")
    assert await take_report(report) == "[]"
    assert not report.exists()
    # A tool that wrote no report (it crashed, or had nothing to say in a file).
    assert await take_report(report) == ""
