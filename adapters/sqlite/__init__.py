"""The SQLite adapter: the embedded default store."""

from jobtable.adapters.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
