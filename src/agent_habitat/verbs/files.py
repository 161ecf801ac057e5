"""The edit verbs: `file_write` and `file_edit`, confined to the open project."""

from __future__ import annotations

from ..files import (
    FILE_EDIT_DESCRIPTION,
    FILE_WRITE_DESCRIPTION,
    FileEditArgs,
    FileEditResult,
    FileWriteArgs,
    FileWriteResult,
)
from .row import Verb

__all__ = ["FILE_VERBS"]

FILE_VERBS = (
    Verb(
        name="write",
        group="file",
        args=FileWriteArgs,
        result=FileWriteResult,
        call=lambda h, a, p: h.files.write(a),
        cli=False,  # a person has an editor; the verbs exist for the agent
        summary="write a whole file in the project (atomic)",
        description=FILE_WRITE_DESCRIPTION,
    ),
    Verb(
        name="edit",
        group="file",
        args=FileEditArgs,
        result=FileEditResult,
        call=lambda h, a, p: h.files.edit(a),
        cli=False,
        summary="replace text in a project file, all edits or none",
        description=FILE_EDIT_DESCRIPTION,
    ),
)
