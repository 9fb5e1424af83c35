"""``jobtable.AsyncClient``: ``jobtable.Client`` for asyncio applications (FastAPI, Starlette).

Every call is the Client's own, run in a small pool of threads of the AsyncClient's, so the
event loop never waits on the database and there is one store implementation, not two.
``wait`` and ``follow`` wait on the loop itself: each change the Client hears of wakes
them through the loop (no thread is parked per waiter). ``enqueue(..., connection=)``
awaits the insert on the application's psycopg ``AsyncConnection``, inside its
transaction.

    async with jobtable.AsyncClient("jobtable.db", kinds=["myapp.jobs"]) as client:
        job_id = await client.enqueue("count", {"steps": 5})
        job = await client.wait(job_id, timeout=30)
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.core.errors import JobNotFoundError
from jobtable.core.following import (
    LOOK_AGAIN,
    check_wait_timeout,
    finished_or_wait,
    versions_read,
)
from jobtable.core.ids import could_exist
from jobtable.core.jobs import CancelOutcome, Enqueued, Job, JobDetail, RetryOutcome
from jobtable.core.kind_spec import JobRequest
from jobtable.entrypoints.embedded_client import Client
from jobtable.entrypoints.wiring import redact

T = TypeVar("T")

THREADS = 4
"""Threads an AsyncClient runs the Client's calls in: as many database calls at once."""


class AsyncClient:
    """Enqueue, read, wait for, follow and operate on jobs of one database from asyncio;
    an async context manager. Nothing here blocks the event loop."""

    def __init__(
        self,
        database: str | os.PathLike[str],
        *,
        kinds: Iterable[str] | str = (),
        logger: logging.Logger | None = None,
        threads: int = THREADS,
    ) -> None:
        """As ``jobtable.Client`` takes them; nothing is opened until ``open`` (or ``async
        with``). ``threads``: the database calls run at once."""
        self._database = os.fspath(database)
        self._kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        self._logger = logger
        self._threads = threads
        self._client: Client | None = None
        self._pool: ThreadPoolExecutor | None = None

    async def open(self) -> AsyncClient:
        """Open the database and load the kinds (ConfigError, StoreError as Client raises)."""
        if self._client is None:
            pool = ThreadPoolExecutor(self._threads, thread_name_prefix="jobtable-async-client")
            try:
                self._client = await asyncio.get_running_loop().run_in_executor(
                    pool,
                    functools.partial(
                        Client, self._database, kinds=self._kinds, logger=self._logger
                    ),
                )
            except BaseException:
                pool.shutdown(wait=False)
                raise
            self._pool = pool
        return self

    async def close(self) -> None:
        """Close the database's connections; calls still running finish first. Idempotent."""
        client, pool = self._client, self._pool
        self._client = self._pool = None
        if client is not None and pool is not None:
            await asyncio.get_running_loop().run_in_executor(pool, client.close)
            pool.shutdown(wait=False)

    async def __aenter__(self) -> AsyncClient:
        return await self.open()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def client(self) -> Client:
        """The Client the calls run on (for what has no async form: kinds, list_jobs)."""
        if self._client is None:
            raise RuntimeError("the AsyncClient is not open: use `async with` or `await open()`")
        return self._client

    async def _run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        client = self.client  # raises when closed
        del client
        in_context = contextvars.copy_context()  # the caller's span: a send span's parent
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, functools.partial(in_context.run, call, *args, **kwargs)
        )

    # -- enqueue -----------------------------------------------------------

    async def enqueue(
        self, kind: str, payload: Any, *, connection: Any = None, **options: Any
    ) -> Enqueued:
        """Enqueue a job of ``kind`` with ``payload`` (its JSON value, or the payload object),
        options as a kind's ``enqueue`` takes them (``run_at``, ``delay``, ``queue``,
        ``priority``, ``timeout``, ``unique_key``). With ``connection`` (the application's
        psycopg ``AsyncConnection``, in a transaction) the job is written in that
        transaction. Raises what ``Client.enqueue`` raises, storing nothing."""
        client = self.client
        request = client.encode(kind, _as_json(client, kind, payload), EnqueueOptions(**options))
        if connection is None:
            (enqueued,) = await self._run(client.enqueue_batch, [request])
            return enqueued
        return await client.enqueue_on_async(request, connection)

    async def enqueue_many(self, requests: Sequence[tuple[str, Any]]) -> list[Enqueued]:
        """Enqueue ``(kind, payload)`` pairs (or ``(kind, JobRequest)``: a payload with its
        options, as ``Kind.job`` makes one) in one transaction: all of them, or none."""
        client = self.client
        encoded = []
        for kind, given in requests:
            if isinstance(given, JobRequest):
                payload = _as_json(client, kind, given.payload)
                encoded.append(client.encode(kind, payload, given.options))
            else:
                encoded.append(client.encode(kind, _as_json(client, kind, given)))
        return await self._run(client.enqueue_batch, encoded)

    # -- reads and actions ---------------------------------------------------

    async def get(self, job_id: str) -> Job | None:
        return await self._run(self.client.get, job_id)

    async def detail(self, job_id: str) -> JobDetail | None:
        return await self._run(self.client.detail, job_id)

    async def cancel(self, job_id: str) -> tuple[CancelOutcome, Job] | None:
        return await self._run(self.client.cancel, job_id)

    async def retry(self, job_id: str) -> tuple[RetryOutcome, Job] | None:
        return await self._run(self.client.retry, job_id)

    async def wait(self, job_id: str, timeout: float | None = None) -> Job:
        """The job once it has finished; woken on the loop by each change to it. Raises
        TimeoutError after ``timeout`` seconds (None: waits for good), JobNotFoundError."""
        check_wait_timeout(timeout)
        if not could_exist(job_id):
            raise JobNotFoundError(job_id)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        async with self._changes_of(job_id) as changed:
            while True:
                changed.clear()  # before the read: a change after it wakes the wait below
                job = await self.get(job_id)
                left = None if deadline is None else deadline - loop.time()
                looked = finished_or_wait(job_id, job, timeout, left)
                if isinstance(looked, Job):
                    return looked
                await _woken(changed, looked)

    async def follow(self, job_id: str) -> AsyncIterator[Job]:
        """Each version of the job, in order, until it finishes (as ``Client.follow``):
        ``async for job in client.follow(job_id)``."""
        if not could_exist(job_id):
            raise JobNotFoundError(job_id)
        after: int | None = None
        async with self._changes_of(job_id) as changed:
            while True:
                changed.clear()
                got = await self._run(self.client.events, job_id, after)
                shown, after, ended = versions_read(job_id, got, after)
                for job in shown:
                    yield job
                if ended:
                    return
                await _woken(changed, LOOK_AGAIN)

    def _changes_of(self, job_id: str) -> _Subscribed:
        return _Subscribed(self, job_id)

    def __repr__(self) -> str:
        return f"jobtable.AsyncClient({redact(self._database)!r}, kinds={list(self._kinds)!r})"


class _Subscribed:
    """An asyncio event set on the loop at each change the Client hears of to one job."""

    def __init__(self, owner: AsyncClient, job_id: str) -> None:
        self._owner = owner
        self._job_id = job_id
        self._subscription: Any = None

    async def __aenter__(self) -> asyncio.Event:
        client = self._owner.client
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def poked() -> None:
            with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(changed.set)

        self._subscription = client.changes.subscribe(self._job_id, on_poke=poked)
        try:
            await self._owner._run(client.hear_other_processes)  # may open a listening connection
        except BaseException:  # cancelled meanwhile: __aexit__ will not run
            client.changes.unsubscribe(self._subscription)
            raise
        return changed

    async def __aexit__(self, *exc: object) -> None:
        self._owner.client.changes.unsubscribe(self._subscription)


async def _woken(changed: asyncio.Event, seconds: float) -> None:
    """Wait on the loop until ``changed`` is set or ``seconds`` pass."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(changed.wait(), seconds)


def _as_json(client: Client, kind: str, payload: Any) -> Any:
    """A payload object of ``kind``'s type as its JSON value (what ``encode`` checks)."""
    spec = client.kinds.get(kind)
    if spec is not None and isinstance(payload, spec.payload_type):
        return client.converter.unstructure(payload)
    return payload
