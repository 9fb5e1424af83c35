"""What is particular to the PostgreSQL store: migrations, errors, the password kept out."""

from __future__ import annotations

import threading

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import StoreError
from tests.support.postgres import fresh_schema, postgres_url

NOW = FakeClock().now()


def open_store(url, schema):
    from jobtable.adapters.postgres import PostgresStore

    return PostgresStore.open(url, now=NOW, schema=schema)


def test_a_new_schema_gets_every_migration_once_and_reopening_changes_nothing():
    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        assert store.applied_at_open == ["0001_jobs", "0002_jobs_status"]
        store.close()
        again = open_store(url, schema)
        assert again.applied_at_open == []
        assert again.migrate(now=NOW) == []
        again.close()


def test_concurrent_openers_apply_each_migration_once():
    with fresh_schema() as (url, schema):
        opened, errors = [], []
        barrier = threading.Barrier(4)

        def open_it():
            barrier.wait()
            try:
                opened.append(open_store(url, schema))
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        assert sorted(len(store.applied_at_open) for store in opened) == [0, 0, 0, 2]
        for store in opened:
            store.close()


def test_a_status_outside_the_four_is_refused_by_the_schema():
    import psycopg

    with fresh_schema() as (url, schema):
        open_store(url, schema).close()
        with (
            psycopg.connect(url, options=f"-c search_path={schema}") as conn,
            pytest.raises(psycopg.errors.CheckViolation),
        ):
            conn.execute(
                "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)"
                " VALUES ('x', 'k', 'pending', '{}', now(), now())"
            )


def test_an_unreachable_server_is_unavailable_and_its_password_never_shown():
    postgres_url()  # skip or fail like every PostgreSQL test when none is configured
    from jobtable.adapters.postgres import PostgresStore

    secret_url = "postgresql://app:hunter2-sentinel@127.0.0.1:1/jobs"
    with pytest.raises(StoreError) as raised:
        PostgresStore.open(secret_url, now=NOW)
    assert raised.value.category == "database unavailable"
    assert "hunter2" not in repr(raised.value)
    assert raised.value.__cause__ is None or "hunter2" not in str(raised.value.__cause__)


def test_an_enqueue_anywhere_wakes_the_listener_and_it_reconnects_after_a_drop():
    import psycopg

    from jobtable.core import NewJob

    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        other = open_store(url, schema)
        woken = threading.Event()
        listener = store.watch(woken.set)
        try:
            other.create(NewJob(id="first", kind="noop", payload="{}"), now=NOW)
            assert woken.wait(10)

            with psycopg.connect(url, autocommit=True) as admin:
                listening = (
                    "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %%'"
                    " AND pid <> pg_backend_pid()"
                )
                (dropped,) = admin.execute(listening).fetchone()
                admin.execute("SELECT pg_terminate_backend(%s)", (dropped,))
                for _ in range(200):  # until a new session listens again (backoff 50 ms)
                    again = admin.execute(listening).fetchone()
                    if again is not None and again[0] != dropped:
                        break
                    threading.Event().wait(0.05)
                assert again is not None and again[0] != dropped
            woken.clear()
            other.create(NewJob(id="after", kind="noop", payload="{}"), now=NOW)
            assert woken.wait(10)
        finally:
            listener.stop()
            store.close()
            other.close()


def test_a_runner_whose_liveness_session_died_takes_its_lock_again():
    import psycopg

    from jobtable.core import NewJob, Status

    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        try:
            store.hold_liveness("runner-a")
            store.create(NewJob(id="job-a", kind="noop", payload="{}"), now=NOW)
            store.claim_next(runner_id="runner-a", now=NOW)
            with psycopg.connect(url, autocommit=True) as admin:
                holder = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
                (session,) = admin.execute(holder).fetchone()
                admin.execute("SELECT pg_terminate_backend(%s)", (session,))
                for _ in range(200):  # until the server has ended the session
                    if admin.execute(holder).fetchone() is None:
                        break
                    threading.Event().wait(0.02)

                store.hold_liveness("runner-a")  # what the runner's next sweep does

                (renewed,) = admin.execute(holder).fetchone()
            assert renewed != session
            assert store.recover_orphans(code="x", max_attempts={}, now=NOW).failed == 0
            assert store.get("job-a").status is Status.RUNNING
        finally:
            store.release_liveness("runner-a")
            store.close()
