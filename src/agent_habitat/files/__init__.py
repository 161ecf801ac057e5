# files/: the edit verbs. models (request/result), text (decoding, line endings, locating
# `old`), confine (staying inside the project root), atomic (temp file + rename), editor
# (the service: per-path locks, events, on_change).
from .confine import OutsideProjectError
from .editor import FileEditor, OnChange
from .models import (
    FILE_EDIT_DESCRIPTION,
    FILE_WRITE_DESCRIPTION,
    Edit,
    FileEditArgs,
    FileEditResult,
    FileWriteArgs,
    FileWriteResult,
    render_file_change,
)
from .text import BinaryFileError, EditConflictError

__all__ = [
    "FILE_EDIT_DESCRIPTION",
    "FILE_WRITE_DESCRIPTION",
    "BinaryFileError",
    "Edit",
    "EditConflictError",
    "FileEditArgs",
    "FileEditResult",
    "FileEditor",
    "FileWriteArgs",
    "FileWriteResult",
    "OnChange",
    "OutsideProjectError",
    "render_file_change",
]
