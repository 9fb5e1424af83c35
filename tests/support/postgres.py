"""A fresh PostgreSQL schema per test, from the server ``JOBTABLE_TEST_POSTGRES`` names.

Without the variable, PostgreSQL tests skip with a reason; in CI (``CI`` set)
they fail instead, so an unreachable server can never pass as green.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

URL_VARIABLE = "JOBTABLE_TEST_POSTGRES"


def postgres_url() -> str:
    url = os.environ.get(URL_VARIABLE)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"CI must set {URL_VARIABLE} to a reachable PostgreSQL")
        pytest.skip(f"set {URL_VARIABLE}=postgresql://... to run the PostgreSQL tests")
    return url


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
