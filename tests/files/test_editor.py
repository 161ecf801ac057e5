"""The edit verbs against real files in a temporary project."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from agent_habitat.errors import HabitatError, UsageError
from agent_habitat.events import InMemoryEventBus
from agent_habitat.files import (
    BinaryFileError,
    Edit,
    EditConflictError,
    FileEditArgs,
    FileEditor,
    FileWriteArgs,
    OutsideProjectError,
)
from agent_habitat.files.atomic import TEMP_SUFFIX
from agent_habitat.testing import EventRecorder

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def bus(root: Path) -> InMemoryEventBus:
    return InMemoryEventBus(str(root))


@pytest.fixture
def editor(root: Path, bus: InMemoryEventBus) -> FileEditor:
    return FileEditor(lambda: root, bus)


def edit(path: str, *edits: tuple[str, str] | tuple[str, str, str]) -> FileEditArgs:
    return FileEditArgs(
        path=path,
        edits=[Edit(old=e[0], new=e[1], anchor=e[2] if len(e) == 3 else None) for e in edits],
    )


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob(f"*{TEMP_SUFFIX}")]


REPEATED = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"


async def test_an_edit_replaces_the_one_occurrence(editor: FileEditor, root: Path) -> None:
    (root / "m.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    result = await editor.edit(edit("m.py", ("y = 2", "y = 3")))
    assert (root / "m.py").read_text(encoding="utf-8") == "x = 1\ny = 3\n"
    assert (result.path, result.edits, result.bytes, result.line_endings) == ("m.py", 1, 12, "lf")


async def test_a_missing_old_is_refused_naming_lines_that_differ_only_in_indentation(
    editor: FileEditor, root: Path
) -> None:
    (root / "m.py").write_text("def f():\n        return 1\n", encoding="utf-8")
    with pytest.raises(EditConflictError, match=r"`old` not found.*at lines 2:"):
        await editor.edit(edit("m.py", ("    return 1\n    # end", "")))
    assert (root / "m.py").read_text(encoding="utf-8") == "def f():\n        return 1\n"


async def test_an_ambiguous_old_is_refused_with_the_candidates_line_numbers(
    editor: FileEditor, root: Path
) -> None:
    (root / "m.py").write_text(REPEATED, encoding="utf-8")
    with pytest.raises(EditConflictError, match=r"occurs 2 times, at lines 2, 6;"):
        await editor.edit(edit("m.py", ("return 1", "return 2")))
    assert (root / "m.py").read_text(encoding="utf-8") == REPEATED


async def test_an_anchor_picks_the_first_occurrence_after_it(
    editor: FileEditor, root: Path
) -> None:
    (root / "m.py").write_text(REPEATED, encoding="utf-8")
    await editor.edit(edit("m.py", ("return 1", "return 2", "def b(")))
    assert (root / "m.py").read_text(encoding="utf-8") == REPEATED.replace(
        "    return 1\n", "    return 2\n"
    ).replace("return 2", "return 1", 1)


async def test_an_anchor_must_occur_once_and_before_old(editor: FileEditor, root: Path) -> None:
    (root / "m.py").write_text(REPEATED, encoding="utf-8")
    with pytest.raises(EditConflictError, match=r"`anchor` occurs 2 times, at lines 2, 6"):
        await editor.edit(edit("m.py", ("def b", "def c", "return 1")))
    with pytest.raises(EditConflictError, match=r"`anchor` not found"):
        await editor.edit(edit("m.py", ("return 1", "return 2", "def zzz(")))
    with pytest.raises(EditConflictError, match=r"at or after the anchor \(line 5\).*lines 1\b"):
        await editor.edit(edit("m.py", ("def a", "def c", "def b")))


async def test_edits_of_one_call_apply_all_or_none(editor: FileEditor, root: Path) -> None:
    (root / "m.py").write_text("a\nb\nc\n", encoding="utf-8")
    with pytest.raises(EditConflictError, match=r"edit 2 of 2 on m.py: `old` not found"):
        await editor.edit(edit("m.py", ("a", "A"), ("zzz", "Z")))
    assert (root / "m.py").read_text(encoding="utf-8") == "a\nb\nc\n"
    await editor.edit(edit("m.py", ("a", "A"), ("A\nb", "AB")))
    assert (root / "m.py").read_text(encoding="utf-8") == "AB\nc\n"


async def test_old_found_nowhere_says_what_to_do(editor: FileEditor, root: Path) -> None:
    # No line holds even its first line: the fix is to read the file again, not to retry.
    (root / "m.py").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(EditConflictError) as caught:
        await editor.edit(edit("m.py", ("nothing like it", "x")))
    assert str(caught.value) == (
        "m.py: `old` not found, nor its first line: read the file again (it may have "
        "changed since you saw it) and copy `old` from it exactly"
    )


async def test_an_edit_that_changes_nothing_is_refused(editor: FileEditor, root: Path) -> None:
    (root / "m.py").write_text("a\n", encoding="utf-8")
    with pytest.raises(EditConflictError, match="the same"):
        await editor.edit(edit("m.py", ("a", "a")))


async def test_a_crlf_file_stays_crlf(editor: FileEditor, root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await editor.edit(edit("w.txt", ("one\ntwo", "uno\ndos\nmas")))
    assert (root / "w.txt").read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"
    assert result.line_endings == "crlf"
    await editor.write(FileWriteArgs(path="w.txt", content="a\nb\n"))
    assert (root / "w.txt").read_bytes() == b"a\r\nb\r\n"


async def test_lines_an_edit_does_not_touch_keep_their_own_endings(
    editor: FileEditor, root: Path
) -> None:
    (root / "mixed.txt").write_bytes(b"a\r\nb\nc\r\nd\r\n")
    await editor.edit(edit("mixed.txt", ("c\n", "C\n")))
    assert (root / "mixed.txt").read_bytes() == b"a\r\nb\nC\r\nd\r\n"


async def test_the_files_mode_is_kept(editor: FileEditor, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("echo a\n", encoding="utf-8")
    script.chmod(0o751)
    await editor.edit(edit("run.sh", ("echo a", "echo b")))
    await editor.write(FileWriteArgs(path="run.sh", content="echo c\n"))
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text(encoding="utf-8") == "echo c\n"


async def test_write_creates_a_file_and_its_folders(editor: FileEditor, root: Path) -> None:
    result = await editor.write(FileWriteArgs(path="pkg/sub/new.py", content="x = 1\n"))
    assert (root / "pkg/sub/new.py").read_text(encoding="utf-8") == "x = 1\n"
    assert (result.path, result.created, result.bytes) == ("pkg/sub/new.py", True, 6)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((root / "pkg/sub/new.py").stat().st_mode) == 0o666 & ~umask


async def test_paths_that_leave_the_root_are_refused(
    editor: FileEditor, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n", encoding="utf-8")
    (root / "link.txt").symlink_to(outside)
    (root / "dirlink").symlink_to(tmp_path)
    for path in ["../outside.txt", str(outside), "sub/../../outside.txt"]:
        with pytest.raises(OutsideProjectError, match=r"is outside the project root"):
            await editor.write(FileWriteArgs(path=path, content="x"))
    for path in ["link.txt", "dirlink/outside.txt", "dirlink/new.txt"]:
        with pytest.raises(OutsideProjectError, match=rf"path '{path}' leads through a symlink"):
            await editor.write(FileWriteArgs(path=path, content="x"))
    with pytest.raises(OutsideProjectError, match=r"link\.txt"):
        await editor.edit(edit("link.txt", ("keep", "lost")))
    assert outside.read_text(encoding="utf-8") == "keep\n"
    assert not (tmp_path / "new.txt").exists()


async def test_a_symlink_inside_the_root_edits_its_target(editor: FileEditor, root: Path) -> None:
    (root / "real.txt").write_text("a\n", encoding="utf-8")
    (root / "alias.txt").symlink_to("real.txt")
    result = await editor.edit(edit("alias.txt", ("a", "b")))
    assert result.path == "real.txt"
    assert (root / "alias.txt").is_symlink()
    assert (root / "real.txt").read_text(encoding="utf-8") == "b\n"


async def test_folders_and_git_internals_are_refused(editor: FileEditor, root: Path) -> None:
    (root / ".git").mkdir()
    with pytest.raises(OutsideProjectError, match=r"inside \.git"):
        await editor.write(FileWriteArgs(path=".git/config", content="x"))
    with pytest.raises(OutsideProjectError, match="is a folder"):
        await editor.write(FileWriteArgs(path=".", content="x"))


async def test_binary_files_are_refused(editor: FileEditor, root: Path) -> None:
    (root / "blob.bin").write_bytes(b"ab\0cd")
    (root / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(BinaryFileError, match=r"blob\.bin is a binary file"):
        await editor.edit(edit("blob.bin", ("ab", "x")))
    with pytest.raises(BinaryFileError, match="not UTF-8"):
        await editor.write(FileWriteArgs(path="latin.txt", content="x"))
    assert (root / "blob.bin").read_bytes() == b"ab\0cd"


async def test_editing_a_missing_file_says_to_write_it(editor: FileEditor, root: Path) -> None:
    with pytest.raises(UsageError, match="does not exist; create it with file_write"):
        await editor.edit(edit("nope.py", ("a", "b")))


async def test_no_project_open_is_refused_plainly(bus: InMemoryEventBus) -> None:
    with pytest.raises(UsageError, match="no project is open"):
        await FileEditor(lambda: None, bus).write(FileWriteArgs(path="a", content=""))


@pytest.mark.parametrize("failing", ["fsync", "replace"])
async def test_a_failure_mid_write_leaves_the_old_file_and_no_temp_file(
    editor: FileEditor, root: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    (root / "m.py").write_text("old\n", encoding="utf-8")

    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing, broken)
    with pytest.raises(HabitatError, match=r"cannot write m.py: No space left.*unchanged"):
        await editor.edit(edit("m.py", ("old", "new")))
    monkeypatch.undo()
    assert (root / "m.py").read_text(encoding="utf-8") == "old\n"
    assert leftovers(root) == []


async def test_applied_changes_are_events_and_reach_on_change(
    editor: FileEditor, root: Path, bus: InMemoryEventBus
) -> None:
    seen: list[Sequence[Path]] = []
    editor.on_change = seen.append
    recorder = EventRecorder(bus)
    await editor.write(FileWriteArgs(path="a.py", content="x = 1\n"))
    await editor.edit(edit("a.py", ("1", "22")))
    with pytest.raises(EditConflictError):
        await editor.edit(edit("a.py", ("zzz", "y")))
    assert [(e.kind, e.data) for e in recorder.events] == [
        ("file.written", {"path": "a.py", "bytes": 6, "created": True}),
        ("file.edited", {"path": "a.py", "bytes": 7, "edits": 1}),
    ]
    assert seen == [[root / "a.py"], [root / "a.py"]]


async def test_an_async_on_change_is_awaited_and_its_failure_does_not_undo_the_write(
    root: Path, bus: InMemoryEventBus
) -> None:
    marked: list[Path] = []

    async def mark_changed(paths: Sequence[Path]) -> None:
        marked.extend(paths)
        raise RuntimeError("listener bug")

    editor = FileEditor(lambda: root, bus, on_change=mark_changed)
    result = await editor.write(FileWriteArgs(path="a.py", content="x\n"))
    assert marked == [root / "a.py"]
    assert result.created
    assert (root / "a.py").read_text(encoding="utf-8") == "x\n"


async def test_edits_of_different_files_run_in_parallel(
    editor: FileEditor, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each write waits, inside its worker thread, until both have reached the rename: this
    # passes only when the two calls are in flight at the same time (else the barrier breaks).
    for name in ("a.py", "b.py"):
        (root / name).write_text("v = 0\n", encoding="utf-8")
    barrier = threading.Barrier(2, timeout=5)
    real_replace = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        barrier.wait()
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    async with anyio.create_task_group() as tg:
        for name in ("a.py", "b.py"):
            tg.start_soon(editor.edit, edit(name, ("0", "1")))
    assert (root / "a.py").read_text(encoding="utf-8") == "v = 1\n"
    assert (root / "b.py").read_text(encoding="utf-8") == "v = 1\n"


async def test_edits_of_one_file_queue_and_both_apply(editor: FileEditor, root: Path) -> None:
    (root / "m.py").write_text("a = 0\nb = 0\n", encoding="utf-8")
    async with anyio.create_task_group() as tg:
        tg.start_soon(editor.edit, edit("m.py", ("a = 0", "a = 1")))
        tg.start_soon(editor.edit, edit("m.py", ("b = 0", "b = 1")))
    assert (root / "m.py").read_text(encoding="utf-8") == "a = 1\nb = 1\n"
    assert leftovers(root) == []


async def test_a_cancelled_call_still_announces_what_it_wrote(
    editor: FileEditor, root: Path, bus: InMemoryEventBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "m.py").write_text("v = 0\n", encoding="utf-8")
    seen: list[Sequence[Path]] = []

    async def mark_changed(paths: Sequence[Path]) -> None:
        await anyio.lowlevel.checkpoint()  # where a cancelled, unshielded call would stop
        seen.append(paths)

    editor.on_change = mark_changed
    recorder = EventRecorder(bus)
    in_replace = anyio.Event()
    release = threading.Event()
    real_replace = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        anyio.from_thread.run_sync(in_replace.set)
        release.wait(10)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(editor.edit, edit("m.py", ("0", "1")))
            await in_replace.wait()
            tg.cancel_scope.cancel()
            release.set()
    assert (root / "m.py").read_text(encoding="utf-8") == "v = 1\n"
    assert recorder.kinds() == ["file.edited"]
    assert seen == [[root / "m.py"]]
