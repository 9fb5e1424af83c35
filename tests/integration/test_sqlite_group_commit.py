"""Group commit on SQLite (issue 12): writes that wait while another commits share the next
transaction and its fsync; each keeps its own outcome, and one write's failure never
takes the others' with it."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from jobtable.adapters.sqlite.connections import Connections
from jobtable.core.errors import StoreUnavailableError
from tests.support.threads import run_in_threads


@pytest.fixture
def db(tmp_path):
    connections = Connections(str(tmp_path / "jobs.db"), busy_timeout_ms=5000)
    connections.write(lambda conn: conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
    commits: list[str] = []
    with connections.writer() as conn:
        conn.set_trace_callback(
            lambda sql: commits.append(sql) if sql in ("BEGIN IMMEDIATE", "COMMIT") else None
        )
    connections.commits = commits
    yield connections
    connections.close()


def insert(value: int):
    def work(conn: sqlite3.Connection) -> int:
        conn.execute("INSERT INTO t (id) VALUES (?)", (value,))
        return value

    return work


def stored(db: Connections) -> list[int]:
    with db.reader() as conn:
        return [row[0] for row in conn.execute("SELECT id FROM t ORDER BY id")]


def gather_while_held(db: Connections, works) -> list[object]:
    """Start one thread per work while the writer is held, then let go: they form one group."""
    outcomes: list[object] = [None] * len(works)

    def call(index: int) -> None:
        try:
            outcomes[index] = db.write(works[index])
        except Exception as error:  # each caller's own outcome, carried back
            outcomes[index] = error

    threads = [threading.Thread(target=call, args=(n,)) for n in range(len(works))]
    with db.writer():
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(db._pending) < len(works):  # every write waits for the held writer
            assert time.monotonic() < deadline, "the writes never queued"
            time.sleep(0.001)
    for thread in threads:
        thread.join(10)
    return outcomes


def test_writes_waiting_together_commit_in_one_transaction(db):
    before = len(db.commits)
    outcomes = gather_while_held(db, [insert(n) for n in range(20)])
    assert outcomes == list(range(20))
    assert stored(db) == list(range(20))
    assert db.commits[before:] == ["BEGIN IMMEDIATE", "COMMIT"]


def test_a_failing_write_raises_for_its_caller_alone(db):
    db.write(insert(5))
    before = len(db.commits)
    outcomes = gather_while_held(db, [insert(1), insert(5), insert(7)])
    assert outcomes[0] == 1 and outcomes[2] == 7
    assert isinstance(outcomes[1], sqlite3.IntegrityError)
    assert stored(db) == [1, 5, 7]
    # One transaction: the failing write rolled back to its savepoint, the rest committed.
    assert db.commits[before:] == ["BEGIN IMMEDIATE", "COMMIT"]


def test_a_write_that_ends_the_transaction_does_not_lose_the_others(db):
    def ends_it(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t (id) VALUES (100)")
        conn.execute("ROLLBACK")  # as SQLite does itself on a full disk or an I/O error
        raise sqlite3.OperationalError("disk I/O error")

    outcomes = gather_while_held(db, [insert(1), ends_it, insert(2)])
    assert outcomes[0] == 1 and outcomes[2] == 2
    assert isinstance(outcomes[1], sqlite3.OperationalError)
    assert stored(db) == [1, 2]


def test_a_lone_write_commits_at_once(db):
    before = len(db.commits)
    assert db.write(insert(3)) == 3
    assert db.commits[before:] == ["BEGIN IMMEDIATE", "COMMIT"]


def test_a_write_that_gave_up_waiting_never_runs_later(tmp_path):
    db = Connections(str(tmp_path / "jobs.db"), busy_timeout_ms=100)
    db.write(lambda conn: conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
    outcome: list[object] = []
    try:
        with db.writer():
            thread = threading.Thread(target=lambda: _try(db, outcome))
            thread.start()
            thread.join(10)
        assert isinstance(outcome[0], StoreUnavailableError)
        db.write(insert(9))  # the next group runs without the abandoned write
        assert stored(db) == [9]
    finally:
        db.close()


def _try(db: Connections, outcome: list[object]) -> None:
    try:
        outcome.append(db.write(insert(1)))
    except StoreUnavailableError as error:
        outcome.append(error)


def test_many_threads_each_get_their_own_answer(db):
    answers: dict[int, int] = {}

    def writes(first: int):
        def run() -> None:
            for value in range(first, first + 50):
                answers[value] = db.write(insert(value))

        return run

    run_in_threads([writes(1000 * n) for n in range(1, 9)])
    assert all(answer == value for value, answer in answers.items())
    assert stored(db) == sorted(answers) and len(answers) == 400


def test_a_write_whose_group_committed_returns_while_the_writer_stays_held(db):
    """A caller whose write a group committed returns at once, not when the writer is free
    again: the writer may then stay held as long as another process holds the database, and
    a claim committed but not returned for that long looks lost to the runner's sweep."""
    outcomes: dict[int, object] = {}
    returned = {value: threading.Event() for value in (1, 2)}

    def call(value: int) -> None:
        try:
            outcomes[value] = db.write(insert(value))
        except Exception as error:  # carried back to the test's thread
            outcomes[value] = error
        returned[value].set()

    threads = [threading.Thread(target=call, args=(value,)) for value in (1, 2)]
    with db.writer() as conn:  # the writer held past the group's commit
        for count, thread in enumerate(threads, start=1):
            thread.start()
            deadline = time.monotonic() + 10
            while len(db._pending) < count:  # queued in this order: the first leads
                assert time.monotonic() < deadline, "the writes never queued"
                time.sleep(0.001)
        db._commit_pending(conn)
        assert returned[2].wait(10), "a committed write waited for the writer to be free"
    for thread in threads:
        thread.join(10)
    assert outcomes == {1: 1, 2: 2}
    assert stored(db) == [1, 2]


def test_a_limited_claim_run_again_after_its_group_rolled_back_claims_each_job_once(tmp_path):
    """A write that ends the group's transaction (a full disk) has the others run again; a
    claim of limited kinds keeps nothing of its rolled-back first run."""
    from jobtable.adapters.sqlite import SqliteStore, connections
    from jobtable.core.batch import Batch
    from jobtable.core.limits import RunningLimit
    from tests.contract.test_batch_contract import LATER, T0
    from tests.contract.test_limits_contract import add

    store = SqliteStore.open(tmp_path / "jobs.db", now=T0)
    export = add(store, "export")
    noops = [add(store, "noop") for _ in range(3)]
    db = store._db

    def disk_full(conn: sqlite3.Connection) -> None:  # another caller's write in the group
        conn.execute("ROLLBACK")
        raise sqlite3.OperationalError("database or disk is full")

    def grouped_write(work, *, durable=True):
        mine = connections._Write(work, durable)
        with db.writer() as conn:
            group = [mine, connections._Write(disk_full)]
            while group:
                group = connections._run_group(conn, group)
        return mine.outcome()

    db.write = grouped_write
    try:
        done = store.run_batch(
            Batch(claim=3, limits={"export": RunningLimit(n=1, keyed=False)}),
            runner_id="runner-a", now=LATER, kinds=("export", "noop"),
        )  # fmt: skip
    finally:
        store.close()
    assert [job.id for job in done.claimed] == [export, *noops[:2]]
