"""``jobtable.AsyncClient`` on both engines: it enqueues (alone, in a batch, or on the
application's psycopg AsyncConnection), reads, cancels and retries; ``wait`` and ``follow``
wait on the event loop itself, so many of them share one thread; nothing it refuses is
stored."""

from __future__ import annotations

import asyncio

import pytest

import jobtable
from jobtable.core import InvalidPayloadError, Runner, Status
from jobtable.core.codes import CANCELLED
from jobtable.core.errors import JobNotFoundError
from jobtable.core.jobs import CancelOutcome, RetryOutcome
from tests.integration import test_embedded_client
from tests.support.databases import query
from tests.unit.kinds_for_tests import CountPayload

DEADLINE = 30.0
KINDS = test_embedded_client.KINDS
database = test_embedded_client.database  # the fixtures: each engine, a runner over its own store
runner_elsewhere = test_embedded_client.runner_elsewhere


def run(coroutine: object) -> object:
    return asyncio.run(asyncio.wait_for(coroutine, DEADLINE))  # type: ignore[arg-type]


def test_an_async_client_enqueues_what_another_runner_runs_and_waits_on_the_loop(
    database, runner_elsewhere: Runner
):
    async def scenario() -> None:
        async with jobtable.AsyncClient(database, kinds=KINDS) as client:
            job_id = await client.enqueue("count", {"steps": 3}, priority=2)
            job = await client.wait(job_id, timeout=DEADLINE)
            assert (job.id, job.status, job.result) == (job_id, Status.SUCCEEDED, {"done": 3})
            detail = await client.detail(job_id)
            assert detail is not None and detail.job == job
            assert (await client.get(job_id)) == job
            followed = [each async for each in client.follow(
                await client.enqueue("count", CountPayload(steps=4)))]  # fmt: skip
            assert followed[-1].status is Status.SUCCEEDED
            assert followed[-1].result == {"done": 4}
            assert [each.version for each in followed] == sorted({j.version for j in followed})

    run(scenario())


def test_many_waits_share_one_thread_because_they_wait_on_the_loop(database):
    async def scenario() -> None:
        async with jobtable.AsyncClient(database, kinds=KINDS, threads=1) as client:
            ids = await client.enqueue_many([("count", {"steps": n}) for n in range(20)])
            waits = [asyncio.create_task(client.wait(job_id)) for job_id in ids]
            await asyncio.sleep(0)  # every wait has begun
            for job_id in ids:  # through the one thread: a wait parked on it would block these
                await client.cancel(job_id)
            jobs = await asyncio.gather(*waits)
            assert [(job.id, job.error) for job in jobs] == [(i, CANCELLED) for i in ids]

    run(scenario())


def test_a_refused_batch_stores_nothing_and_names_the_field(database):
    async def scenario() -> None:
        async with jobtable.AsyncClient(database, kinds=KINDS) as client:
            with pytest.raises(InvalidPayloadError, match=r"kind 'count': expected an integer"):
                await client.enqueue_many([("count", {"steps": 1}), ("count", {"steps": "x"})])
            with pytest.raises(jobtable.InvalidOptionError):
                await client.enqueue("count", {}, priority=42)

    run(scenario())
    assert query(database, "SELECT count(*) FROM jobs") == [(0,)]


def test_an_async_client_cancels_and_retries(database):
    async def scenario() -> None:
        async with jobtable.AsyncClient(database, kinds=KINDS) as client:
            job_id = await client.enqueue("count", {}, delay=3600)
            outcome, job = await client.cancel(job_id)
            assert (outcome, job.status, job.error) == (
                CancelOutcome.CANCELLED, Status.FAILED, CANCELLED
            )  # fmt: skip
            assert (await client.wait(job_id, timeout=0)).error == CANCELLED
            outcome, job = await client.retry(job_id)
            assert (outcome, job.status) == (RetryOutcome.RETRIED, Status.QUEUED)
            with pytest.raises(TimeoutError):
                await client.wait(job_id, timeout=0.05)
            with pytest.raises(JobNotFoundError):
                await client.wait("01a00000-0000-7000-8000-000000000000", timeout=1)
            assert await client.cancel("no-such-job") is None

    run(scenario())


def test_an_enqueue_on_the_applications_async_connection_commits_or_rolls_back_with_it(
    database, runner_elsewhere: Runner
):
    if not database.startswith("postgresql://"):

        async def refused() -> None:
            async with jobtable.AsyncClient(database, kinds=KINDS) as client:
                with pytest.raises(TypeError, match="needs PostgreSQL"):
                    await client.enqueue("count", {}, connection=object())

        run(refused())
        return
    import psycopg

    async def scenario() -> None:
        async with (
            jobtable.AsyncClient(database, kinds=KINDS) as client,
            await psycopg.AsyncConnection.connect(database) as app,
        ):
            async with app.transaction(force_rollback=True):
                dropped = await client.enqueue("count", {"steps": 1}, connection=app)
            async with app.transaction():
                kept = await client.enqueue("count", {"steps": 2}, connection=app)
                assert await client.get(kept) is None  # not committed yet: nobody sees it
            assert (await client.wait(kept, timeout=DEADLINE)).result == {"done": 2}
            assert await client.get(dropped) is None
            with pytest.raises(TypeError, match=r"psycopg\.AsyncConnection"):
                await client.enqueue("count", {}, connection=object())

    run(scenario())


def test_an_async_client_that_is_not_open_says_so():
    client = jobtable.AsyncClient("nowhere.db", kinds=KINDS)
    with pytest.raises(RuntimeError, match="not open"):
        run(client.get("x"))


def test_a_wait_or_follow_cancelled_while_it_subscribes_leaves_no_subscription(database):
    """A request gone (a client that disconnected, a ``wait_for`` that timed out) while its
    wait was still starting must not leave a waiter that every change pokes for ever."""

    async def scenario() -> None:
        async with jobtable.AsyncClient(database, kinds=KINDS, threads=1) as client:
            job_id = await client.enqueue("count", {"steps": 1})
            hub = client.client.changes
            before = hub.watched()

            async def follow() -> None:
                async for _ in client.follow(job_id):
                    pass

            for start in [lambda: client.wait(job_id, timeout=DEADLINE), follow] * 20:
                task = asyncio.ensure_future(start())
                await asyncio.sleep(0)  # it has subscribed and awaits its first look
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            assert hub.watched() == before

    run(scenario())
