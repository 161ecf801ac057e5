# store/: the SQLite (WAL) file of a workspace (db) and the event journal kept in it (journal).
# `SqliteJournal` loads on first use (PEP 562): it brings the event models (pydantic), which
# a reader of `state.db` alone (`habitat scene`) does not need.
from typing import TYPE_CHECKING

from ..lazy import lazy_attributes
from .db import SCHEMA_VERSION, Database

if TYPE_CHECKING:
    from .journal import SqliteJournal

__getattr__ = lazy_attributes(__name__, {"SqliteJournal": "journal"})

__all__ = ["SCHEMA_VERSION", "Database", "SqliteJournal"]
