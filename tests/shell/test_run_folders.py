"""Removing a run folder leaves nothing behind, even with a writer making files in it as it
goes: closing a tab of `exec yes` under load left its folder 9 times in 40, holding the
`keeper.lock` of a keeper whose start the close had overtaken (see shell/run_folders.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.shell import run_folders


def _run_folder(spool: Path, name: str) -> Path:
    folder = spool / name
    folder.mkdir(parents=True)
    for file in ("output", "output.hole", "keeper.lock"):
        (folder / file).write_bytes(b"x")
    return folder


def test_a_file_made_by_its_path_while_the_folder_goes_cannot_keep_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = tmp_path / "spool"
    folder = _run_folder(spool, "run-7")
    late: list[BaseException] = []
    remove = shutil.rmtree

    def with_a_late_writer(path: Any, *args: Any, **kwargs: Any) -> None:
        # As a keeper starting late does: `keeper.lock` by the run folder's path, mid-removal.
        try:
            os.close(os.open(folder / "keeper.lock", os.O_RDWR | os.O_CREAT, 0o600))
        except OSError as exc:
            late.append(exc)
        remove(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", with_a_late_writer)
    run_folders.remove([folder, spool / "run-8"])  # run-8 was never made: nothing to do
    assert [type(exc) for exc in late] == [FileNotFoundError]  # the path no longer led there
    assert os.listdir(spool) == []


def test_what_a_dying_habitat_left_renamed_goes_at_the_next_sweep(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    _run_folder(spool, "gone-4242-run-3")
    kept = _run_folder(spool, "run-4")
    run_folders.sweep(spool)
    run_folders.sweep(tmp_path / "no-spool-yet")
    assert os.listdir(spool) == [kept.name]
