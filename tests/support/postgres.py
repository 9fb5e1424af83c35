"""A fresh PostgreSQL schema per test, from the server ``JOBTABLE_TEST_POSTGRES`` names.

Without the variable, PostgreSQL tests skip with a reason; in CI (``CI`` set)
they fail instead, so an unreachable server can never pass as green.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest

URL_VARIABLE = "JOBTABLE_TEST_POSTGRES"


def postgres_url() -> str:
    url = os.environ.get(URL_VARIABLE)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"CI must set {URL_VARIABLE} to a reachable PostgreSQL")
        pytest.skip(f"set {URL_VARIABLE}=postgresql://... to run the PostgreSQL tests")
    return _workers_own(url)


_databases: dict[str, str] = {}


def _workers_own(url: str) -> str:
    """Under pytest-xdist, the URL of a database of the worker's own on the same server
    (made once, kept for the next run). A runner's advisory lock is keyed by its id within
    a database, so two workers' tests registering one runner id, each in its own schema,
    would otherwise take each other's lock."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return url
    if url not in _databases:
        import psycopg

        parts = urlsplit(url)
        name = f"{parts.path.lstrip('/') or 'postgres'}_{worker}"
        with psycopg.connect(url, autocommit=True) as conn:
            made = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if made.fetchone() is None:
                with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(f'CREATE DATABASE "{name}"')
        _databases[url] = urlunsplit(parts._replace(path=f"/{name}"))
    return _databases[url]


@contextmanager
def fresh_schema() -> Iterator[tuple[str, str]]:
    """Create an empty schema, yield (url, schema), and drop it with everything in it."""
    import psycopg

    url = postgres_url()
    schema = f"jobtable_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield url, schema
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
