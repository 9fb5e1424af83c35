"""``jobtable.Client(database, kinds=[...])`` on both engines: it enqueues, a runner over its
own store (another process, as far as the database can tell) runs the job, and ``wait``
and ``follow`` hear of it; it closes, and refuses what it cannot open by name."""

from __future__ import annotations

import threading
import traceback
import urllib.parse
from collections.abc import Iterator

import pytest

import jobtable
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import InvalidPayloadError, Runner, Status, StoreError
from jobtable.entrypoints.cli import main
from jobtable.entrypoints.config import ConfigError
from jobtable.entrypoints.wiring import open_store
from tests.integration import client_kinds
from tests.support.databases import database_for

KINDS = ["tests.integration.client_kinds"]


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> Iterator[str]:
    with database_for(request.param, tmp_path) as named:
        assert main(["migrate", "--database", named, "--log-level", "warning"]) == 0
        yield named


@pytest.fixture
def runner_elsewhere(database) -> Iterator[Runner]:
    """A runner with its own store: it hears the client's jobs only through the database."""
    store = open_store(database, synchronous="full", now=SystemClock().now())
    runner = Runner(store, SystemClock(), workers=1)
    client_kinds.register(runner.kinds)
    runner.start()
    yield runner
    runner.stop()
    assert runner.join(timeout=10)
    store.close()


def test_a_client_enqueues_a_job_another_runner_runs_and_wait_returns_it(
    database, runner_elsewhere
):
    with jobtable.Client(database, kinds=KINDS) as client:
        job_id = client.enqueue("count", {"steps": 3})
        job = client.wait(job_id, timeout=30)
        assert (job.id, job.status, job.result) == (job_id, Status.SUCCEEDED, {"done": 3})
        assert client.detail(job_id).job == job
        followed = list(client.follow(client.enqueue("count", {"steps": 4})))
    assert [job.status for job in followed][-1] is Status.SUCCEEDED
    assert followed[-1].result == {"done": 4}
    assert [job.version for job in followed] == sorted({job.version for job in followed})


def test_a_client_checks_payloads_by_its_kinds_and_stores_nothing_refused(database):
    with jobtable.Client(database, kinds="tests.integration.client_kinds") as client:
        with pytest.raises(InvalidPayloadError, match=r"kind 'count': expected an integer"):
            client.enqueue("count", {"steps": "three"})
        assert client.list_jobs().jobs == ()


def test_leaving_the_client_closes_its_database_and_its_watcher(database):
    before = set(threading.enumerate())
    with jobtable.Client(database, kinds=KINDS) as client:
        job_id = client.enqueue("count", {})
        with pytest.raises(TimeoutError):
            client.wait(job_id, timeout=0.1)  # no runner: starts the watcher, times out
    with pytest.raises(StoreError):
        client.get(job_id)
    client.close()  # again: nothing happens
    left = [thread for thread in set(threading.enumerate()) - before if thread.is_alive()]
    for thread in left:
        thread.join(timeout=10)
    assert not [thread.name for thread in left if thread.is_alive()]


def test_a_kind_module_that_cannot_be_imported_is_named(database):
    with pytest.raises(ConfigError, match=r"^kinds: cannot import 'no_such_kinds_module'"):
        jobtable.Client(database, kinds=["no_such_kinds_module"])
    with pytest.raises(ConfigError, match=r"^kinds: 'not a name' is not a module name"):
        jobtable.Client(database, kinds=["not a name"])


def test_a_sqlite_file_that_does_not_exist_is_refused_and_not_made(tmp_path):
    missing = tmp_path / "typo.db"
    with pytest.raises(ConfigError, match="no database at"):
        jobtable.Client(missing)
    assert not missing.exists()


def test_a_password_in_the_url_shows_in_no_error_repr_or_log(tmp_path, caplog):
    secret = "pw-sentinel-7d1e"
    caplog.set_level("DEBUG")
    with pytest.raises(StoreError) as refused:
        jobtable.Client(f"postgresql://jobtable:{secret}@127.0.0.1:1/nowhere")
    assert secret not in "".join(traceback.format_exception(refused.value))
    with database_for("postgres", tmp_path) as database:
        parts = urllib.parse.urlsplit(database)
        netloc = f"{parts.username or 'postgres'}:{secret}@{parts.hostname}:{parts.port or 5432}"
        with_password = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
        told = ""
        try:  # a server that takes any password (trust) opens; one that checks refuses
            client = jobtable.Client(with_password, kinds=KINDS)
        except StoreError as error:
            told = "".join(traceback.format_exception(error))
        else:
            with client:
                told = repr(client)
                assert "***" in told
        assert secret not in told
    assert secret not in caplog.text
