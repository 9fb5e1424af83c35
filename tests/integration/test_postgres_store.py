"""What is particular to the PostgreSQL store: migrations, errors, the password kept out."""

from __future__ import annotations

import threading
from contextlib import ExitStack

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import NewJob, Status, StoreError
from jobtable.core.outcome import Fail, Succeed
from tests.support.postgres import fresh_schema, postgres_url

NOW = FakeClock().now()


def open_store(url, schema):
    from jobtable.adapters.postgres import PostgresStore

    return PostgresStore.open(url, now=NOW, schema=schema)


def test_a_new_schema_gets_every_migration_once_and_reopening_changes_nothing():
    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        assert store.applied_at_open == [
            "0001_jobs",
            "0002_jobs_status",
            "0003_runners",
            "0004_lifecycle",
            "0005_observe",
            "0006_batched_history",
            "0007_readable_times",
            "0008_snooze_count",
            "0009_unique_while_unfinished",
            "0010_cheap_rows",
            "0011_claimed_ahead",
            "0012_limits",
            "0013_queue_limits",
            "0014_error_class_and_trace",
            "0015_schedule_listing",
            "0016_failed_by_queue",
            "0017_minutes",
            "0018_limit_keys",
            "0019_ready_in_queue",
            "0020_keys_by_queue",
            "0021_one_limit_key_index",
            "0022_fair_turns_by_turn",
            "0023_history_by_index",
        ]
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
        # Each step is its own transaction under the lock: openers may share the work,
        # but every step is applied by exactly one of them.
        applied = [version for store in opened for version in store.applied_at_open]
        assert sorted(applied) == [
            "0001_jobs",
            "0002_jobs_status",
            "0003_runners",
            "0004_lifecycle",
            "0005_observe",
            "0006_batched_history",
            "0007_readable_times",
            "0008_snooze_count",
            "0009_unique_while_unfinished",
            "0010_cheap_rows",
            "0011_claimed_ahead",
            "0012_limits",
            "0013_queue_limits",
            "0014_error_class_and_trace",
            "0015_schedule_listing",
            "0016_failed_by_queue",
            "0017_minutes",
            "0018_limit_keys",
            "0019_ready_in_queue",
            "0020_keys_by_queue",
            "0021_one_limit_key_index",
            "0022_fair_turns_by_turn",
            "0023_history_by_index",
        ]
        for store in opened:
            store.close()


def test_a_status_outside_the_five_stored_is_refused_by_the_schema():
    """Four public statuses, and 'scheduled': a queued job not due yet."""
    import psycopg

    with fresh_schema() as (url, schema):
        open_store(url, schema).close()
        with (
            psycopg.connect(url, options=f"-c search_path={schema}") as conn,
            pytest.raises(psycopg.errors.CheckViolation),
        ):
            conn.execute(
                "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, run_at)"
                " VALUES ('x', 'k', 'pending', '{}', now(), now(), now())"
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


def enqueue_one(store, app, name: str) -> None:
    store.create(NewJob(id=name, kind="noop", payload="{}"), now=NOW)


def enqueue_one_with_a_unique_key(store, app, name: str) -> None:
    store.create(NewJob(id=name, kind="noop", payload="{}", unique_key=name), now=NOW)


def enqueue_a_batch(store, app, name: str) -> None:
    jobs = [NewJob(id=f"{name}-{n}", kind="noop", payload="{}") for n in (1, 2)]
    store.create_many(jobs, now=NOW)


def enqueue_a_batch_with_unique_keys(store, app, name: str) -> None:
    jobs = [
        NewJob(id=f"{name}-{n}", kind="noop", payload="{}", unique_key=f"{name}-{n}")
        for n in (1, 2)
    ]
    store.create_many(jobs, now=NOW)


def enqueue_in_the_applications_transaction(store, app, name: str) -> None:
    with app.transaction():
        store.create_in(app, NewJob(id=name, kind="noop", payload="{}"), now=NOW)


ENQUEUES = [
    enqueue_one,
    enqueue_one_with_a_unique_key,
    enqueue_a_batch,
    enqueue_a_batch_with_unique_keys,
    enqueue_in_the_applications_transaction,
]


@pytest.mark.parametrize("enqueue", ENQUEUES, ids=lambda enqueue: enqueue.__name__)
def test_an_enqueue_anywhere_wakes_the_listener_and_it_reconnects_after_a_drop(enqueue):
    """Every way to enqueue sends the NOTIFY that wakes another process's idle workers."""
    import psycopg

    with ExitStack() as stack:
        url, schema = stack.enter_context(fresh_schema())
        store = open_store(url, schema)
        stack.callback(store.close)
        other = open_store(url, schema)
        stack.callback(other.close)
        app = stack.enter_context(psycopg.connect(url, options=f"-c search_path={schema}"))
        woken = threading.Event()
        # No fallback look within the test: only a NOTIFY from the enqueue can wake it.
        listener = store.watch(woken.set, fallback_interval=3600)
        stack.callback(listener.stop)
        enqueue(other, app, "first")
        assert woken.wait(10)

        with psycopg.connect(url, autocommit=True) as admin:
            # This store's listener only: the server is shared with other work.
            listening = (  # the session whose last statements began with its LISTEN
                "SELECT pid FROM pg_stat_activity"
                f" WHERE query LIKE 'LISTEN \"{store.channel}\"%' AND pid <> pg_backend_pid()"
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
        enqueue(other, app, "after")
        assert woken.wait(10)


def test_a_transactional_enqueue_notifies_when_the_application_commits_and_never_on_rollback():
    """What listeners hear is read up to a marker NOTIFY sent after each step: the server
    delivers notifications in commit order, so one the step sent is heard before it."""
    import psycopg

    with ExitStack() as stack:
        url, schema = stack.enter_context(fresh_schema())
        store = open_store(url, schema)
        stack.callback(store.close)
        app = stack.enter_context(psycopg.connect(url, options=f"-c search_path={schema}"))
        listening = stack.enter_context(psycopg.connect(url, autocommit=True))
        listening.execute(f'LISTEN "{store.channel}"')
        marking = stack.enter_context(psycopg.connect(url, autocommit=True))

        def heard_until(marker: str) -> list[str]:
            marking.execute("SELECT pg_notify(%s, %s)", (store.channel, marker))
            heard = []
            for notice in listening.notifies(timeout=10):
                if notice.payload == marker:
                    return heard
                heard.append(notice.payload)
            raise AssertionError(f"the marker {marker!r} never came; heard {heard}")

        with app.transaction(force_rollback=True):
            store.create_in(app, NewJob(id="rolled-back", kind="noop", payload="{}"), now=NOW)
            assert heard_until("open, then rolled back") == []
        assert heard_until("rolled back") == []
        with app.transaction():
            store.create_in(app, NewJob(id="committed", kind="noop", payload="{}"), now=NOW)
            assert heard_until("open, then committed") == []
        assert heard_until("committed") == [""]  # one wake, at the commit


def test_a_runner_whose_lock_session_was_terminated_takes_its_lock_again_on_a_new_one():
    from jobtable.core import LockState
    from tests.contract.test_store_contract import runner_info, sighting
    from tests.support.stores import break_lock

    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        try:
            store.register_runner(runner_info("runner-a"), now=NOW)
            session = store.lock_backend_pid("runner-a")
            break_lock(store, "runner-a")  # pg_terminate_backend
            assert sighting(store, "runner-a").lock is LockState.ABSENT
            assert store.confirm_liveness("runner-a", timeout=5) is False
            assert store.lock_backend_pid("runner-a") not in (None, session)
            assert sighting(store, "runner-a").lock is LockState.HELD
        finally:
            store.close()


def test_stores_opened_with_the_schema_in_the_url_or_as_an_argument_share_one_channel():
    from jobtable.adapters.postgres import PostgresStore
    from jobtable.core import NewJob

    with fresh_schema() as (url, schema):
        by_argument = open_store(url, schema)
        separator = "&" if "?" in url else "?"
        by_url = PostgresStore.open(f"{url}{separator}options=-csearch_path%3D{schema}", now=NOW)
        woken = threading.Event()
        listener = by_argument.watch(woken.set, fallback_interval=3600)
        try:
            assert by_url.channel == by_argument.channel == f"jobtable_jobs_{schema}"
            by_url.create(NewJob(id="job", kind="noop", payload="{}"), now=NOW)
            assert woken.wait(10)
        finally:
            listener.stop()
            by_argument.close()
            by_url.close()


def test_the_stores_sessions_plan_without_jit_and_keep_the_urls_own_options():
    """JIT compiled an overestimated claim at each run (250 ms for 2 ms of work): the store's
    sessions turn it off, keeping what the URL's own options set (a search_path here)."""
    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        separator = "&" if "?" in url else "?"
        own = f"{url}{separator}options=-csearch_path%3D{schema}%20-cstatement_timeout%3D12345"
        for store in (open_store(url, schema), PostgresStore.open(own, now=NOW)):
            try:
                settings = store._engine.read(
                    lambda conn: conn.execute(
                        "SELECT current_setting('jit'), current_schema(),"
                        " current_setting('statement_timeout')"
                    ).fetchone()
                )
                assert settings[:2] == ("off", schema)
            finally:
                store.close()
        assert settings[2] == "12345ms"  # the URL's own option kept


def test_behind_a_pooler_each_batch_turns_jit_off_for_its_transaction():
    """PgBouncer refuses a session's options: each batch's transaction turns JIT off, and
    the pooled session is left as it was (the server's own setting)."""
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        with psycopg.connect(url) as conn:
            server = conn.execute("SELECT current_setting('jit')").fetchone()[0]
        store = PostgresStore.open(url, now=NOW, schema=schema, pooler=True)
        try:
            inside, after = store._engine.send_then_read(
                lambda conn: conn.execute("SELECT current_setting('jit')"),
                lambda conn, sent: (
                    sent.fetchone()[0],
                    conn.execute("SELECT current_setting('jit')").fetchone()[0],
                ),
            )
        finally:
            store.close()
        assert (inside, after) == ("off", server)


def claim_one_of_any_kind(store) -> list:
    return [store.claim_next(runner_id="r", now=NOW)]


def claim_one_of_its_kinds(store) -> list:
    return [store.claim_next(runner_id="r", now=NOW, kinds={"noop"})]


def claim_a_batch_of_any_kind(store) -> list:
    return store.record_and_claim([], limit=2, runner_id="r", now=NOW)[1]


def claim_a_batch_of_its_kinds(store) -> list:
    return store.record_and_claim([], limit=2, runner_id="r", now=NOW, kinds={"noop"})[1]


CLAIMS = [
    claim_one_of_any_kind,
    claim_one_of_its_kinds,
    claim_a_batch_of_any_kind,
    claim_a_batch_of_its_kinds,
]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.__name__)
def test_a_claim_passes_by_a_job_another_transaction_holds_locked(claim):
    """SKIP LOCKED: a claimer never waits behind another's lock; it takes the next job.

    The claim runs in a thread while the test watches the server: a session that
    the lock holder blocks means the claim waited, and the lock is let go at once.
    """
    import psycopg

    from tests.support.threads import run_in_threads

    with ExitStack() as stack:
        url, schema = stack.enter_context(fresh_schema())
        store = open_store(url, schema)
        stack.callback(store.close)
        for job_id in ("job-1", "job-2"):
            store.create(NewJob(id=job_id, kind="noop", payload="{}"), now=NOW)
        holder = stack.enter_context(psycopg.connect(url, options=f"-c search_path={schema}"))
        watching = stack.enter_context(psycopg.connect(url, autocommit=True))
        holder.execute("SELECT id FROM jobs WHERE id = 'job-1' FOR UPDATE")  # held open
        blocked_by_holder = (
            "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))"
        )
        claimed, waited, done = [], [], threading.Event()

        def claimer() -> None:
            try:
                claimed.extend(claim(store))
            finally:
                done.set()

        def watcher() -> None:
            try:
                while not done.wait(0.01):
                    (blocked,) = watching.execute(
                        blocked_by_holder, (holder.info.backend_pid,)
                    ).fetchone()
                    if blocked:
                        waited.append(claim.__name__)
                        return
            finally:
                holder.rollback()  # the lock goes: a claim that waited goes on

        run_in_threads([claimer, watcher], within=60)
        assert waited == [], "the claim waited behind the lock instead of passing by"
        assert [job.id for job in claimed] == ["job-2"]


def test_a_prune_passes_over_a_failed_job_an_operator_is_retrying_right_now():
    import psycopg

    from jobtable.adapters.postgres.engine import QUERIES
    from tests.contract.test_lifecycle_contract import add, claim, later

    with ExitStack() as stack:
        url, schema = stack.enter_context(fresh_schema())
        store = open_store(url, schema)
        stack.callback(store.close)
        job_id = add(store)
        assert store.record(claim(store).claim, Fail(code="boom"), now=later(1))
        retrier = stack.enter_context(psycopg.connect(url, options=f"-c search_path={schema}"))
        # The retry has changed the row and not committed: it holds the row's lock.
        assert (
            retrier.execute(QUERIES["retry_failed_job"], {"id": job_id, "now": later(5)}).rowcount
            == 1
        )
        assert store.prune({"failed": later(100)}, now=later(100), limit=10).jobs == 0  # skipped
        retrier.commit()
        assert store.get(job_id).status is Status.QUEUED
        assert store.prune({"failed": later(100)}, now=later(100), limit=10).jobs == 0  # not failed


def test_the_event_listener_names_each_changed_job_and_looks_again_after_a_reconnect():
    import psycopg

    from tests.contract.test_lifecycle_contract import add, claim, later

    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        other = open_store(url, schema)
        heard: list[str | None] = []
        changed = threading.Condition()

        def on_change(job_id: str | None) -> None:
            with changed:
                heard.append(job_id)
                changed.notify_all()

        def hears(expected: str | None) -> bool:
            with changed:
                return changed.wait_for(lambda: expected in heard, timeout=20)

        listener = store.watch_jobs(on_change, fallback_interval=3600)
        try:
            job_id = add(other)
            running = claim(other)  # a change: queued -> running
            assert hears(job_id) and None not in heard
            with psycopg.connect(url, autocommit=True) as admin:
                listening = (
                    "SELECT pid FROM pg_stat_activity"
                    f" WHERE query LIKE 'LISTEN \"{store.events_channel}\"%'"
                    " AND pid <> pg_backend_pid()"
                )
                (dropped,) = admin.execute(listening).fetchone()
                other.publish(running.claim, result="1", now=later(1))  # may go unheard
                admin.execute("SELECT pg_terminate_backend(%s)", (dropped,))
            assert hears(None)  # back to listening: any job may have changed meanwhile
        finally:
            listener.stop()
            store.close()
            other.close()


def test_a_change_from_a_session_with_another_search_path_writes_this_schemas_history():
    import psycopg

    from tests.contract.test_lifecycle_contract import add

    with fresh_schema() as (url, schema):
        store = open_store(url, schema)
        try:
            job_id = add(store)
            with psycopg.connect(url, autocommit=True) as operator:  # search_path: public
                operator.execute(
                    f"UPDATE \"{schema}\".jobs SET status = 'failed', error = 'by_hand'"
                    " WHERE id = %s",
                    (job_id,),
                )
            assert store.get(job_id).version == 1
            (change,) = store.events(job_id, after=0).events
            assert (change.job.status, change.job.error) == (Status.FAILED, "by_hand")
        finally:
            store.close()


def test_a_batch_one_statement_of_which_fails_records_none_of_it_and_the_pool_is_as_before():
    """A batch goes in one round trip as one transaction (no BEGIN): the claim failing
    must take the outcomes sent before it down too; the connection goes back to the
    pool out of autocommit, so later writes keep their transactions."""
    import psycopg

    from jobtable.adapters.postgres import PostgresStore
    from jobtable.core import NewJob

    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=NOW, schema=schema, pool_size=1)
        try:
            store.create(NewJob(id="done-1", kind="noop", payload="{}"), now=NOW)
            held = store.claim_next(runner_id="r", now=NOW)
            store.create(NewJob(id="bad-1", kind="explode", payload="{}"), now=NOW)
            with psycopg.connect(url, options=f"-c search_path={schema}") as admin:
                admin.execute(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$"
                    " BEGIN RAISE EXCEPTION 'refused'; END $$"
                )
                admin.execute(
                    "CREATE TRIGGER refuse BEFORE UPDATE ON jobs FOR EACH ROW"
                    " WHEN (NEW.kind = 'explode') EXECUTE FUNCTION refuse()"
                )
            with pytest.raises(StoreError):
                store.record_and_claim(
                    [(held.claim, Succeed(result="{}"))],
                    limit=1,
                    runner_id="r",
                    now=NOW,
                    kinds=["explode"],
                )
            assert store.get("done-1").status is Status.RUNNING  # the success rolled back
            assert store.get("bad-1").status is Status.QUEUED
            with store._pool.connection() as conn:  # the pool's one connection
                assert conn.autocommit is False
            assert store.record_and_claim(
                [(held.claim, Succeed(result="{}"))], limit=0, runner_id="r", now=NOW
            ) == ([True], [])
            assert store.get("done-1").status is Status.SUCCEEDED
        finally:
            store.close()


def test_a_batch_that_fails_in_the_client_half_way_commits_nothing_it_sent():
    """The statements before the failure were sent already: without a transaction()'s
    BEGIN, only closing the connection before any Sync keeps them from committing."""
    from jobtable.adapters.postgres import PostgresStore
    from jobtable.core import NewJob

    class Unsendable:
        """A failure code psycopg cannot adapt: raises while the batch is being sent."""

    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=NOW, schema=schema, pool_size=1)
        try:
            for job_id in ("job-1", "job-2"):
                store.create(NewJob(id=job_id, kind="noop", payload="{}"), now=NOW)
            first, second = (store.claim_next(runner_id="r", now=NOW) for _ in range(2))
            with pytest.raises(Exception):  # noqa: PT011 -- psycopg's own, or ours
                store.record_and_claim(
                    [
                        (first.claim, Succeed(result="{}")),
                        (second.claim, Fail(code=Unsendable())),
                    ],
                    limit=0,
                    runner_id="r",
                    now=NOW,
                )
            assert store.get("job-1").status is Status.RUNNING  # its success never committed
            assert store.get("job-2").status is Status.RUNNING
            assert store.record_and_claim(
                [(first.claim, Succeed(result="{}"))], limit=0, runner_id="r", now=NOW
            ) == ([True], [])
        finally:
            store.close()
