"""A real Django project (tests/django_project) on jobtable's ``django.tasks`` backend, on
SQLite and PostgreSQL: tasks enqueued through Django (in and out of ``transaction.atomic()``,
sync and async, deferred, prioritized, on another queue), run by ``manage.py
jobtable_worker``, read back with ``get_result``; Django's task signals fire.

Django 6 needs Python 3.12 or later and this machine's ``python3`` is 3.11: the project
runs in a virtual environment of its own, ``.venv-django`` (scripts/test makes it).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
from pathlib import Path

import pytest

from jobtable import Client
from tests.e2e.conftest import wait_until
from tests.e2e.processes import stop
from tests.support.databases import query
from tests.support.repository import REPO

pytestmark = pytest.mark.e2e
PROJECT = REPO / "tests" / "django_project"
PYTHON = Path(os.environ.get("JOBTABLE_TEST_DJANGO_PYTHON", REPO / ".venv-django/bin/python"))
FINISHED = (
    "plain", "committed", "other_thread", "failed", "async", "extra", "context", "bad_return"
)  # fmt: skip


@pytest.fixture
def django_python() -> Path:
    if not PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail(f"no Django environment at {PYTHON}: scripts/test makes .venv-django")
        pytest.skip(f"no Django environment at {PYTHON} (scripts/test makes .venv-django)")
    return PYTHON


def manage(python: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), "manage.py", *argv], cwd=PROJECT, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def project_env(database: str, tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("JOBTABLE_", "DJANGO_"))}
    return {
        **keep,
        "DJANGO_TEST_DATABASE": database,
        "DJANGO_TEST_SIGNALS": str(tmp_path / "signals.jsonl"),
    }


def test_django_tasks_enqueue_run_and_report_through_jobtable(database, django_python, tmp_path):
    env = project_env(database, tmp_path)
    migrated = manage(django_python, env, "migrate", "-v", "0")
    assert migrated.returncode == 0, migrated.stderr
    enqueued = manage(django_python, env, "shop", "enqueue")
    assert enqueued.returncode == 0, enqueued.stderr
    ids = json.loads(enqueued.stdout)
    assert ids["backend"] == "JobtableBackend"

    # Bad input is refused before anything is stored; a rolled-back enqueue left nothing.
    assert ids["not_json"] == (
        "task shop.tasks.add: its arguments must be JSON (strings, numbers, booleans, None, "
        "lists and dicts): Unsupported type: <class 'set'>"
    )
    rows = dict(query(database, "SELECT id, kind FROM jobs"))
    assert ids["rolled_back"] not in rows
    assert len(rows) == 10
    assert query(database, "SELECT count(*) FROM shop_order") == [(2,)]  # the committed ones
    # Django's priority p maps to round((100 - p) * 9 / 200); run_after to run_at.
    priorities = dict(query(database, "SELECT id, priority FROM jobs"))
    assert (priorities[ids["context"]], priorities[ids["plain"]], priorities[ids["later"]]) == (
        0,
        4,
        9,
    )
    assert ids["async_result"]["status"] == "READY" and ids["async_result"]["args"] == [2, 3]

    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [str(django_python), "manage.py", "jobtable_worker", "--tasks", "extra_tasks",
             "--processes", "2", "--workers", "1"],
            cwd=PROJECT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wanted = [ids[name] for name in FINISHED]

        def all_finished() -> bool:
            marks = ",".join(["%s"] * len(wanted))
            finished = query(
                database,
                f"SELECT count(*) FROM jobs WHERE id IN ({marks}) "
                "AND status IN ('succeeded', 'failed')",
                tuple(wanted),
            )
            return finished == [(len(wanted),)]

        wait_until(all_finished, 60, "every runnable task finished")
    finally:
        assert stop(worker) == 0, log.read_text()

    names = [*FINISHED, "unregistered", "later"]
    answered = manage(django_python, env, "shop", "results", *[ids[name] for name in names])
    assert answered.returncode == 0, answered.stderr
    results = dict(zip(names, json.loads(answered.stdout), strict=True))
    assert {name: (r["status"], r["return_value"]) for name, r in results.items()} == {
        "plain": ("SUCCESSFUL", 5),
        "committed": ("SUCCESSFUL", 2),  # it saw the orders committed with it and the other
        "other_thread": ("SUCCESSFUL", 42),
        "failed": ("FAILED", None),
        "async": ("SUCCESSFUL", {"url": "https://example.com", "fetched": True}),
        "extra": ("SUCCESSFUL", "HI"),
        "context": ("SUCCESSFUL", {"label": "ctx", "attempt": 1, "id": ids["context"]}),
        "bad_return": ("FAILED", None),
        "unregistered": ("READY", None),
        "later": ("READY", None),
    }
    failed = results["failed"]
    assert failed["errors"] == [["shop.tasks.CardDeclined", ""]]  # the class, never the message
    assert results["bad_return"]["errors"] == [["builtins.TypeError", ""]]
    assert failed["args"] == ["4242-4242"] and results["context"]["kwargs"] == {"label": "ctx"}
    for name in FINISHED:
        assert results[name]["attempts"] == 1 and len(results[name]["worker_ids"]) == 1
        assert results[name]["started"] and results[name]["finished"]
    assert "declined" not in log.read_text()  # the exception's text reaches no log

    # A task no live worker registered waits and says why, as any kind does.
    with Client(database) as client:
        waiting = client.detail(ids["unregistered"]).waiting
        later = client.detail(ids["later"])
    assert "no live runner serves kind elsewhere_tasks.nobody_runs_me" in waiting
    assert later.run_at - later.created_at > datetime.timedelta(minutes=59)

    signals = [json.loads(line) for line in (tmp_path / "signals.jsonl").read_text().splitlines()]
    enqueued_pids = {s["pid"] for s in signals if s["signal"] == "enqueued"}
    assert len(enqueued_pids) == 1
    assert {s["id"] for s in signals if s["signal"] == "enqueued"} == set(rows)  # not rolled back
    for name in FINISHED:
        told = [(s["signal"], s["status"]) for s in signals if s["id"] == ids[name]]
        final = "FAILED" if name in ("failed", "bad_return") else "SUCCESSFUL"
        assert told == [("enqueued", "READY"), ("started", "RUNNING"), ("finished", final)]
    ran = [s for s in signals if s["signal"] != "enqueued"]
    assert {s["pid"] for s in ran}.isdisjoint(enqueued_pids) and all(
        s["sender"] == "JobtableBackend" for s in signals
    )
    assert [s["errors"] for s in ran if s["id"] == ids["failed"]][-1] == ["shop.tasks.CardDeclined"]


def test_a_project_on_psycopg2_is_refused_at_start_with_one_clear_error(django_python, tmp_path):
    """Django falls back to psycopg2 when psycopg 3 cannot be imported; jobtable refuses it."""
    # A server nobody listens on: the refusal comes before any connection is made.
    env = project_env("postgresql://postgres@127.0.0.1:9/no_such_database", tmp_path)
    blocked = (
        "import runpy, sys\n"
        "class NoPsycopg3:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'psycopg' or name.startswith('psycopg.') or name.startswith('psycopg_'):\n"
        "            raise ModuleNotFoundError(name, name=name)\n"
        "sys.meta_path.insert(0, NoPsycopg3())\n"
        "sys.argv = ['manage.py', 'check']\n"
        "runpy.run_path('manage.py', run_name='__main__')\n"
    )
    done = subprocess.run(
        [str(django_python), "-c", blocked], cwd=PROJECT, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "jobtable needs psycopg 3 for Django's database 'default'" in done.stderr
    assert "pip install 'psycopg[binary]'" in done.stderr


def test_the_worker_command_refuses_a_bad_option_in_one_line(django_python, tmp_path):
    env = project_env(str(tmp_path / "site.db"), tmp_path)
    done = manage(django_python, env, "jobtable_worker", "--workers", "many")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--workers" in done.stderr, done.stderr
    helped = manage(django_python, env, "jobtable_worker", "--help")
    for flag in ("--workers", "--async-workers", "--queues", "--processes", "--tasks", "--grace"):
        assert flag in helped.stdout


def test_a_postgresql_database_of_djangos_reaches_jobtable_as_the_same_settings(django_python):
    """Django's settings as a URL libpq reads back unchanged, whatever a password holds."""
    script = (
        "from django.conf import settings\n"
        "settings.configure()\n"
        "import json\n"
        "from psycopg.conninfo import conninfo_to_dict\n"
        "from jobtable.contrib.django.databases import postgres_url\n"
        "given = [\n"
        "    dict(NAME='shop db', USER='app@x', PASSWORD='p:@/ %+&?', HOST='db.local', PORT=5432,\n"
        "         OPTIONS={'options': '-c search_path=shop', 'sslmode': 'require', 'pool': True}),\n"
        "    dict(NAME='db', USER='u', HOST='::1', PORT=5433),\n"
        "    dict(NAME='db', HOST='/var/run/postgresql', PORT='5432', OPTIONS={'keepalives': 1}),\n"
        "]\n"
        "print(json.dumps([conninfo_to_dict(postgres_url(each)) for each in given]))\n"
    )
    done = subprocess.run(
        [str(django_python), "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        {"dbname": "shop db", "user": "app@x", "password": "p:@/ %+&?", "host": "db.local",
         "port": "5432", "options": "-c search_path=shop", "sslmode": "require"},
        {"dbname": "db", "user": "u", "host": "::1", "port": "5433"},
        {"dbname": "db", "host": "/var/run/postgresql", "port": "5432", "keepalives": "1"},
    ]  # fmt: skip


def test_without_jobtables_tables_an_enqueue_in_atomic_says_to_migrate(django_python, tmp_path):
    """On SQLite, jobtable's tables cannot be made under Django's write lock: ``manage.py
    migrate`` makes them (its app's migration); without them the enqueue says so at once."""
    env = project_env(str(tmp_path / "site.db"), tmp_path)
    assert manage(django_python, env, "migrate", "shop", "-v", "0").returncode == 0
    done = manage(django_python, env, "shop", "enqueue-in-atomic")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "refused": "jobtable's tables are missing or out of date in Django's database, and "
        "they cannot be made inside transaction.atomic(): run `python manage.py migrate`"
    }
    assert query(str(tmp_path / "site.db"), "SELECT count(*) FROM shop_order") == [(0,)]
