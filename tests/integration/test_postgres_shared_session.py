"""One session per process holds its runners' liveness locks and LISTENs, where no pooler
stands between (adapters/postgres/shared_session.py): a worker process holds two
connections at rest, this session and one pooled; behind a pooler, a lock session per
runner keeps its lock in an open transaction.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from jobtable.core import LockState, NewJob
from tests.contract.test_store_contract import runner_info, sighting
from tests.integration.test_postgres_store import NOW
from tests.support.postgres import fresh_schema
from tests.support.stores import break_lock

# Advisory locks are per database, not per schema: runner ids of this module's own, so
# that tests of other modules taking "runner-a"'s lock at the same time never collide.
RUNNER_A = f"runner-a-{uuid.uuid4().hex[:8]}"
RUNNER_B = f"runner-b-{uuid.uuid4().hex[:8]}"


@contextmanager
def named_store(**options) -> Iterator[tuple[object, str, str, str]]:
    """A store whose connections carry an application name of their own: (store, name, url,
    schema)."""
    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        name = f"jobtable-test-{uuid.uuid4().hex[:8]}"
        separator = "&" if "?" in url else "?"
        store = PostgresStore.open(
            f"{url}{separator}application_name={name}", now=NOW, schema=schema, **options
        )
        try:
            yield store, name, url, schema
        finally:
            store.close()


def admin_query(url: str, sql: str, *params) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        return admin.execute(sql, params).fetchall()


def until(condition: Callable[[], bool], what: str, deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"never: {what}"
        time.sleep(0.02)


def connections(url: str, name: str) -> int:
    sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
    return int(admin_query(url, sql, name)[0][0])


def test_a_runner_and_its_wakes_share_one_session_two_connections_in_all():
    from jobtable.adapters.postgres import PostgresStore

    with named_store() as (store, name, url, schema):
        woken = threading.Event()
        watcher = store.watch(woken.set, fallback_interval=3600)
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        assert store.confirm_liveness(RUNNER_A, timeout=5)
        until(lambda: connections(url, name) <= 2, "the migration's connection is gone")
        assert connections(url, name) == 2  # one pooled, one for the lock and LISTEN
        other = PostgresStore.open(url, now=NOW, schema=schema)
        try:
            woken.clear()
            other.create(NewJob(id="first", kind="noop", payload="{}"), now=NOW)
            assert woken.wait(10)
        finally:
            other.close()
        watcher.stop()
        assert sighting(store, RUNNER_A).lock is LockState.HELD  # the lock outlives it


def test_a_terminated_session_is_replaced_its_lock_taken_again_and_wakes_still_come():
    from jobtable.adapters.postgres import PostgresStore

    with named_store() as (store, name, url, schema):
        woken = threading.Event()
        store.watch(woken.set, fallback_interval=3600)
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        first = store.lock_backend_pid(RUNNER_A)
        woken.clear()
        break_lock(store, RUNNER_A)  # pg_terminate_backend: the lock and the LISTEN go
        assert woken.wait(10)  # heard as a look: anything may have changed unheard
        until(lambda: sighting(store, RUNNER_A).lock is LockState.ABSENT, "lock absent")
        assert store.confirm_liveness(RUNNER_A, timeout=5) is False  # taken again
        assert store.lock_backend_pid(RUNNER_A) not in (None, first)
        assert sighting(store, RUNNER_A).lock is LockState.HELD
        other = PostgresStore.open(url, now=NOW, schema=schema)
        try:
            woken.clear()
            other.create(NewJob(id="after", kind="noop", payload="{}"), now=NOW)
            assert woken.wait(10)  # a NOTIFY, on the new session
        finally:
            other.close()
        until(lambda: connections(url, name) <= 2, "still two connections")


def test_two_runners_locks_share_the_session_and_one_released_leaves_the_other():
    with named_store() as (store, _, url, _):
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        store.register_runner(runner_info(RUNNER_B), now=NOW)
        pid = store.lock_backend_pid(RUNNER_A)
        assert store.lock_backend_pid(RUNNER_B) == pid
        held = "SELECT count(*) FROM pg_locks WHERE pid = %s AND locktype = 'advisory'"
        assert admin_query(url, held, pid) == [(2,)]
        store.unregister_runner(RUNNER_A)
        assert admin_query(url, held, pid) == [(1,)]  # a's, let go of before it returned
        assert sighting(store, RUNNER_B).lock is LockState.HELD
        assert store.confirm_liveness(RUNNER_B, timeout=5) is True


def test_checks_keep_the_session_and_the_server_ends_it_once_they_stop():
    """``idle_session_timeout``: a runner that falls silent (a partition, a stopped process)
    loses its lock after the liveness timeout, with no word from its side; its checks (a
    bare Sync each, no transaction: bench/at_rest.py counts them) keep the session."""
    with named_store(liveness_timeout=5.0) as (store, _, url, _):
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        pid = store.lock_backend_pid(RUNNER_A)
        alive = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s"
        started = time.monotonic()
        while time.monotonic() - started < 7.0:  # past the timeout, a check every 0.5 s
            assert store.confirm_liveness(RUNNER_A, timeout=2) is True
            time.sleep(0.5)
        assert store.lock_backend_pid(RUNNER_A) == pid
        assert admin_query(url, alive, pid) == [(1,)]
        until(lambda: admin_query(url, alive, pid) == [(0,)], "the server ended it", 15.0)
        assert sighting(store, RUNNER_A).lock is LockState.ABSENT


@pytest.mark.parametrize(
    ("pooler", "state"), [(False, "idle"), (True, "idle in transaction")], ids=["direct", "pooler"]
)
def test_the_lock_session_holds_back_no_vacuum(pooler, state):
    """Directly, a session lock outside any transaction; behind a pooler, an open transaction
    with no snapshot and no transaction id. Neither holds back vacuum."""
    with named_store(pooler=pooler) as (store, _, url, _):
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        assert store.confirm_liveness(RUNNER_A, timeout=5)
        pid = store.lock_backend_pid(RUNNER_A)
        sql = "SELECT state, backend_xmin, backend_xid FROM pg_stat_activity WHERE pid = %s"
        assert admin_query(url, sql, pid) == [(state, None, None)]


def test_a_check_that_runs_out_of_time_waiting_for_another_leaves_the_session_be():
    """A round trip another holds the session for (a slow LISTEN, a connect) makes a check
    fail within its own timeout, and never closes the session every runner's lock is on."""
    from jobtable.core.errors import StoreError

    with named_store() as (store, _, _, _):
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        store.register_runner(runner_info(RUNNER_B), now=NOW)
        pid = store.lock_backend_pid(RUNNER_A)
        session = store._locks
        held, done = threading.Event(), threading.Event()

        def hold_the_session() -> None:
            with session._io:
                held.set()
                done.wait(5)

        holder = threading.Thread(target=hold_the_session)
        holder.start()
        try:
            assert held.wait(5)
            started = time.monotonic()
            with pytest.raises(StoreError):
                store.confirm_liveness(RUNNER_A, timeout=0.3)
            assert time.monotonic() - started < 2.0  # its own timeout, not the holder's
        finally:
            done.set()
            holder.join(5)
        assert store.lock_backend_pid(RUNNER_B) == pid
        assert store.confirm_liveness(RUNNER_B, timeout=5) is True  # never lost
        assert store.confirm_liveness(RUNNER_A, timeout=5) is True


def test_payloads_are_read_as_utf8_whatever_the_client_encoding(monkeypatch):
    import psycopg

    monkeypatch.setenv("PGCLIENTENCODING", "LATIN1")
    with named_store() as (store, _, url, _):
        heard: list[str | None] = []
        changed = threading.Event()

        def on_change(job_id: str | None) -> None:
            heard.append(job_id)
            changed.set()

        store.watch_jobs(on_change, fallback_interval=3600)
        with psycopg.connect(url, autocommit=True, client_encoding="UTF8") as admin:
            admin.execute("SELECT pg_notify(%s, %s)", (store.events_channel, "café-1"))
        assert changed.wait(10)
        assert heard == ["café-1"]
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        assert store.confirm_liveness(RUNNER_A, timeout=5) is True


def test_a_lock_is_taken_on_a_new_session_when_the_old_one_died_unnoticed():
    with named_store() as (store, _, url, _):
        store.register_runner(runner_info(RUNNER_A), now=NOW)
        first = store.lock_backend_pid(RUNNER_A)
        admin_query(url, "SELECT pg_terminate_backend(%s)", first)
        until(lambda: admin_query(url, "SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                                  first) == [(0,)], "the session ended")  # fmt: skip
        store.register_runner(runner_info(RUNNER_B), now=NOW)  # no error: a new session
        assert store.lock_backend_pid(RUNNER_B) not in (None, first)
        assert store.confirm_liveness(RUNNER_A, timeout=5) is False  # taken again there
        assert store.lock_backend_pid(RUNNER_A) == store.lock_backend_pid(RUNNER_B)
