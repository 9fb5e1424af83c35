"""The SQLite adapter: the embedded default store."""

from adapters.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
