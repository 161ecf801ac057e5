"""Request and result models of the edit verbs `file_write` and `file_edit`.

The MCP tools take the `*Args` models as their input schema and return the `*Result`
models dumped as structured content, so every field says what it means.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..limits import PathText

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
    description=("Relative to the project root, or absolute in it."),
)


class _Args(BaseModel):
    # Built on first use (defer_build), as are the results: a shell command imports them
    # with the verb table and never uses them.
    model_config = ConfigDict(extra="forbid", defer_build=True)


def encodable(value: str) -> str:
    """Refuse text that UTF-8 cannot encode (a lone surrogate such as `\\ud800`)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"holds a lone surrogate (U+{ord(value[exc.start]):04X}) at character {exc.start}, "
            "which UTF-8 cannot encode: send valid Unicode text"
        ) from None
    return value


def text_only(value: str) -> str:
    """Refuse binary content (a NUL character) and text UTF-8 cannot encode."""
    nul = value.find("\0")
    if nul != -1:
        raise ValueError(
            f"holds a NUL character at character {nul}: the edit verbs write text only; "
            "remove the NUL characters (binary files are not written through them)"
        )
    return encodable(value)


class FileWriteArgs(_Args):
    """Write a whole text file (created with its missing parent folders, or replaced)."""

    path: PathText = _PATH
    content: Annotated[str, AfterValidator(text_only)] = Field(description=("The whole new text."))


class Edit(_Args):
    """One replacement of an exact piece of text."""

    old: Annotated[str, AfterValidator(encodable)] = Field(
        min_length=1,
        description=(
            "Exact text, whitespace included, occurring exactly once (or after `anchor`)."
        ),
    )
    new: Annotated[str, AfterValidator(text_only)] = Field(description="Replacement text.")
    anchor: Annotated[str, AfterValidator(encodable)] | None = Field(
        default=None,
        min_length=1,
        description=(
            "Text occurring exactly once, at or before the `old` meant (its `def name(` line): "
            "the first occurrence of `old` from there is replaced."
        ),
    )


class FileEditArgs(_Args):
    """Replace pieces of a text file; all edits apply, or none."""

    path: PathText = _PATH
    edits: list[Edit] = Field(
        min_length=1,
        description=("Applied in order; all apply or none."),
    )


class _Result(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="The file, relative to the project root (POSIX separators).")
    bytes: int = Field(description="Size of the file as written, in bytes.")
    line_endings: LineEndings = Field(description="Line-ending style the file was written in.")


class FileWriteResult(_Result):
    created: bool = Field(description="True when the file did not exist before.")


class FileEditResult(_Result):
    edits: int = Field(description="Number of edits applied.")


FILE_WRITE_DESCRIPTION = (
    "Write a whole UTF-8 text file in the project (folders created), atomically, keeping an "
    "existing file's mode and line endings. Paths outside the project, .git and binary "
    "content are refused."
)
FILE_EDIT_DESCRIPTION = (
    "Replace exact pieces of a UTF-8 text file in the project, atomically, keeping mode and "
    "line endings; a missing or repeated `old` refuses the call, naming the candidates' lines."
)


def render_file_change(result: FileWriteResult | FileEditResult) -> str:
    """One line saying what was written, for the text part of a tool result."""
    if isinstance(result, FileEditResult):
        done = f"edited {result.path}: {result.edits} edit{'s' if result.edits != 1 else ''}"
    else:
        done = f"{'created' if result.created else 'wrote'} {result.path}"
    return f"{done}, {result.bytes} bytes, {result.line_endings.upper()} line endings\n"
