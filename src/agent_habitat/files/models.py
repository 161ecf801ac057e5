"""Request and result models of the edit verbs `file_write` and `file_edit`.

The MCP tools take the `*Args` models as their input schema and return the `*Result`
models dumped as structured content, so every field says what it means.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FILE_EDIT_DESCRIPTION",
    "FILE_WRITE_DESCRIPTION",
    "Edit",
    "FileEditArgs",
    "FileEditResult",
    "FileWriteArgs",
    "FileWriteResult",
    "LineEndings",
    "render_file_change",
]

LineEndings = Literal["lf", "crlf"]

_PATH = Field(
    min_length=1,
    description=(
        "File to change, relative to the open project's root (or absolute inside it). "
        "Paths that leave the root (`..`, absolute paths elsewhere, symlinks pointing out) "
        "are refused."
    ),
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileWriteArgs(_Args):
    """Write a whole text file (created with its missing parent folders, or replaced)."""

    path: str = _PATH
    content: str = Field(
        description=(
            "The file's complete new text (UTF-8). An existing CRLF file stays CRLF: LF line "
            "endings in `content` are written as CRLF."
        )
    )


class Edit(_Args):
    """One replacement of an exact piece of text."""

    old: str = Field(
        min_length=1,
        description=(
            "Exact text to replace, whitespace included, matched with line endings normalized "
            "to LF. It must occur exactly once in the file (or once after `anchor`); a missing "
            "or ambiguous `old` refuses the whole call, naming the candidates' line numbers."
        ),
    )
    new: str = Field(description="Replacement text (LF endings become CRLF in a CRLF file).")
    anchor: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Disambiguates a repeated `old`: text that must occur exactly once in the file, "
            "at or before the intended occurrence (for example the `def name(` line of the "
            "function holding it). The edit then applies to the first occurrence of `old` "
            "that starts at or after the start of the anchor."
        ),
    )


class FileEditArgs(_Args):
    """Replace pieces of a text file; all edits apply, or none."""

    path: str = _PATH
    edits: list[Edit] = Field(
        min_length=1,
        description=(
            "Replacements applied in order, each to the text left by the ones before it. If "
            "any one cannot apply, the file is left untouched."
        ),
    )


class _Result(BaseModel):
    path: str = Field(description="The file, relative to the project root (POSIX separators).")
    bytes: int = Field(description="Size of the file as written, in bytes.")
    line_endings: LineEndings = Field(description="Line-ending style the file was written in.")


class FileWriteResult(_Result):
    created: bool = Field(description="True when the file did not exist before.")


class FileEditResult(_Result):
    edits: int = Field(description="Number of edits applied.")


FILE_WRITE_DESCRIPTION = (
    "Write a whole UTF-8 text file inside the open project: created (with missing folders) or "
    "replaced. Atomic (a reader never sees half a file); an existing file keeps its mode and "
    "its line endings (CRLF stays CRLF). Paths outside the project root, symlinks pointing "
    "out, .git internals and binary files are refused. For changing part of a file use "
    "file_edit, which sends only the change."
)
FILE_EDIT_DESCRIPTION = (
    "Replace exact pieces of a UTF-8 text file inside the open project: `edits` is a list, each "
    "with `old`, `new` and an optional `anchor`, applied in order; all apply or none. `old` "
    "must occur exactly once "
    "(matched with line endings normalized); when it is missing or repeated the call is "
    "refused with the candidates' line numbers, and an `anchor` (text occurring once, at or "
    "before the occurrence meant) picks the first `old` after it. Atomic; keeps mode and line "
    "endings. Calls on different files run in parallel. Each applied edit marks the verify "
    "epoch stale at once: run verify_run afterwards."
)


def render_file_change(result: FileWriteResult | FileEditResult) -> str:
    """One line saying what was written, for the text part of a tool result."""
    if isinstance(result, FileEditResult):
        done = f"edited {result.path}: {result.edits} edit{'s' if result.edits != 1 else ''}"
    else:
        done = f"{'created' if result.created else 'wrote'} {result.path}"
    return f"{done}, {result.bytes} bytes, {result.line_endings.upper()} line endings\n"
