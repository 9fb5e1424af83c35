"""The PostgreSQL adapter (install with ``pip install jobtable[postgres]``)."""

from jobtable.adapters.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
