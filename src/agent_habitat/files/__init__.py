# files/: the edit verbs. models (request/result), text (decoding, line endings, locating
# `old`), confine (staying inside the project root), atomic (temp file + rename), editor
# (the service: per-path locks, events, on_change).
# The names load their module on first use (PEP 562): `habitat init` and `rules --write`
# write one file through `atomic` and `text` without the editor, the models or the bus.
from ..lazy import lazy_attributes

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
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

__getattr__ = lazy_attributes(
    __name__,
    {
        "OutsideProjectError": "confine",
        "FileEditor": "editor",
        "OnChange": "editor",
        **dict.fromkeys(
            (
                "FILE_EDIT_DESCRIPTION",
                "FILE_WRITE_DESCRIPTION",
                "Edit",
                "FileEditArgs",
                "FileEditResult",
                "FileWriteArgs",
                "FileWriteResult",
                "render_file_change",
            ),
            "models",
        ),
        "BinaryFileError": "text",
        "EditConflictError": "text",
    },
)

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
