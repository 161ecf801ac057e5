# store/: the SQLite (WAL) file of a workspace (db) and the event journal kept in it (journal).
from .db import SCHEMA_VERSION, Database
from .journal import SqliteJournal

__all__ = ["SCHEMA_VERSION", "Database", "SqliteJournal"]
