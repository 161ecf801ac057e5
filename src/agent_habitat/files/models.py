"""Request and result models of the edit verbs `file_write` and `file_edit`.

The MCP tools take the `*Args` models as their input schema and return the `*Result`
models dumped as structured content, so every field says what it means.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Edit",
    "FileEditArgs",
    "FileEditResult",
    "FileWriteArgs",
    "FileWriteResult",
    "LineEndings",
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
