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


DJANGO_ONLY_OPTIONS = frozenset(
    {"pool", "server_side_binding", "isolation_level", "assume_role", "cursor_factory"}
)
"""Django's PostgreSQL ``OPTIONS`` that are Django's own; every other one is libpq's (a
search_path, TLS, keepalives) and is passed on."""


def bring_up_to_date(alias: str) -> None:
    """Apply jobtable's migrations to Django's database ``alias`` when a jobtable task backend
    shares it (``manage.py migrate``)."""
    from django.conf import settings

    from jobtable.adapters.system_clock import SystemClock
    from jobtable.entrypoints.wiring import open_store

    shared = any(
        params.get("BACKEND") == "jobtable.contrib.django.JobtableBackend"
        and "database" not in (params.get("OPTIONS") or {})
        for params in getattr(settings, "TASKS", {}).values()
    )
    if shared and alias == "default":
        open_store(locate(alias), synchronous="full", now=SystemClock().now()).close()


def check_tables_inside_transaction(alias: str) -> None:
    """Inside ``transaction.atomic()`` on a shared SQLite database, jobtable's tables cannot be
    made (Django holds the write lock): RuntimeError at once, saying what to run, rather than
    a wait for a lock that never comes."""
    from jobtable.adapters.migration_files import load_migrations

    connection = connections[alias]
    if connection.vendor != "sqlite" or not connection.in_atomic_block:
        return
    with connection.cursor() as cursor:
        try:
            cursor.execute("SELECT version FROM jobtable_migrations")
            done = {row[0] for row in cursor.fetchall()}
        except Exception:
            done = set()
    if any(step.version not in done for step in load_migrations("sqlite")):
        raise RuntimeError(
            "jobtable's tables are missing or out of date in Django's database, and they "
            "cannot be made inside transaction.atomic(): run `python manage.py migrate`"
        )


def locate(alias: str) -> str:
    """Django's database ``alias`` as jobtable names a database: a path or a URL."""
    check_usable(alias)
    connection = connections[alias]
    given: dict[str, Any] = connection.settings_dict
    if connection.vendor == "sqlite":
        return os.path.abspath(os.fspath(given["NAME"]))
    return postgres_url(given)


def postgres_url(given: dict[str, Any]) -> str:
    """A Django PostgreSQL ``DATABASES`` entry as a ``postgresql://`` URL libpq reads back
    to the same settings (quoted: a password may hold any character)."""
    options = given.get("OPTIONS") or {}
    query = {
        key: str(value)
        for key, value in options.items()
        if key not in DJANGO_ONLY_OPTIONS and isinstance(value, str | int | float)
    }
    host = str(given.get("HOST") or "")
    if host.startswith("/") or "," in host:  # a Unix socket's folder, or several hosts
        query["host"] = host
        host = ""
    elif ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = str(given.get("PORT") or "")
    if port and "host" in query:
        query["port"] = port
        port = ""
    user = _quoted(given.get("USER"))
    password = _quoted(given.get("PASSWORD"))
    login = f"{user}:{password}@" if password else f"{user}@" if user else ""
    name = _quoted(given.get("NAME"))
    tail = f"?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}" if query else ""
    return f"postgresql://{login}{host}{':' + port if port else ''}/{name}{tail}"


def _quoted(value: object) -> str:
    return urllib.parse.quote(str(value or ""), safe="")
