"""Which database a jobtable task backend uses: its ``database`` option, or Django's own.

Django's database is used as a path (SQLite) or a ``postgresql://`` URL built from its
settings; jobs enqueued then go through Django's connection, so they commit or roll
back with the transaction around them.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import connections


def check_usable(alias: str) -> None:
    """ImproperlyConfigured unless Django's database ``alias`` is one jobtable can share:
    SQLite in a file, or PostgreSQL through psycopg 3."""
    connection = connections[alias]
    if connection.vendor == "postgresql":
        from django.db.backends.postgresql.psycopg_any import is_psycopg3

        if not is_psycopg3:
            raise ImproperlyConfigured(
                f"jobtable needs psycopg 3 for Django's database {alias!r}, and Django is "
                "using psycopg2: pip install 'psycopg[binary]' (Django prefers it when both "
                "are installed), or give the task backend OPTIONS a database of its own"
            )
    elif connection.vendor == "sqlite":
        if connection.is_in_memory_db():
            raise ImproperlyConfigured(
                f"jobtable cannot share Django's in-memory SQLite database {alias!r} with "
                "its workers: use a file, or give the task backend OPTIONS a database"
            )
    else:
        raise ImproperlyConfigured(
            f"jobtable runs on SQLite and PostgreSQL; Django's database {alias!r} is "
            f"{connection.vendor}: give the task backend OPTIONS a database"
        )


LIBPQ_OPTIONS = frozenset(
    {
        "options", "sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword",
        "connect_timeout", "application_name", "target_session_attrs", "service", "passfile",
    }
)  # fmt: skip
"""Django's PostgreSQL ``OPTIONS`` that are libpq's (a search_path, TLS): passed on."""


def locate(alias: str) -> str:
    """Django's database ``alias`` as jobtable names a database: a path or a URL."""
    check_usable(alias)
    connection = connections[alias]
    given: dict[str, Any] = connection.settings_dict
    if connection.vendor == "sqlite":
        return os.path.abspath(os.fspath(given["NAME"]))
    options = given.get("OPTIONS") or {}
    query = {key: str(value) for key, value in options.items() if key in LIBPQ_OPTIONS}
    host = str(given.get("HOST") or "")
    if host.startswith("/"):  # a Unix socket's folder
        query["host"] = host
        host = ""
    user = urllib.parse.quote(str(given.get("USER") or ""), safe="")
    password = str(given.get("PASSWORD") or "")
    login = f"{user}:{urllib.parse.quote(password, safe='')}@" if password else f"{user}@"
    port = f":{given['PORT']}" if given.get("PORT") else ""
    name = urllib.parse.quote(str(given.get("NAME") or ""), safe="")
    tail = f"?{urllib.parse.urlencode(query)}" if query else ""
    return f"postgresql://{login if user or password else ''}{host}{port}/{name}{tail}"
