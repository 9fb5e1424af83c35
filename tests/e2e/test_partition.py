"""A worker host cut off from PostgreSQL by a silent network, and the runners that outlive it.

The owner reaches the server through a TCP proxy that stops forwarding and
keeps every connection open (kernels on both sides still acknowledge, so
keepalives see nothing). Required: the owner tells its handlers to stop
before anyone settles its jobs; another runner settles them within the bound
the guarantees page states (the lock session's server-side timeout, 20 s, plus a
sweep or two); and the cut-off runner's ``join(timeout)`` still returns.
"""

from __future__ import annotations

import threading
import time

import attrs
import pytest

from jobtable.adapters.postgres import PostgresStore
from jobtable.adapters.postgres.store import LIVENESS_TIMEOUT
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext, Runner, Status
from tests.e2e.conftest import wait_until
from tests.support.postgres import fresh_schema
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e


@attrs.frozen
class Hold:
    pass


@attrs.frozen
class Held:
    def public(self) -> dict[str, bool]:
        return {"held": True}


def test_a_partitioned_runner_stops_its_handlers_before_another_settles_its_jobs():
    told: list[float] = []
    began = threading.Event()

    def holds(ctx: JobContext, payload: Hold) -> Held:
        began.set()
        ctx.wait(600)
        told.append(time.monotonic())
        raise RuntimeError("stopped")

    with fresh_schema() as (url, schema):
        host, port = url.split("@", 1)[1].split("/", 1)[0].split(":")
        proxy = TcpProxy(host, int(port))
        clock = SystemClock()
        cut_off = PostgresStore.open(proxy.url(url), now=clock.now(), schema=schema)
        direct = PostgresStore.open(url, now=clock.now(), schema=schema)
        owner = Runner(cut_off, clock, workers=1)
        observer = Runner(direct, clock, workers=1)
        owner.kinds.register("hold", holds, payload=Hold)
        observer.kinds.register("hold", holds, payload=Hold)
        owner.start()
        try:
            job_id = owner.enqueue("hold", {})
            # The handler itself, not the row: a claim's reply passes the proxy, and one
            # still in it when it freezes would leave a job claimed that nobody runs.
            wait_until(began.is_set, 30, "the handler running")
            observer.start()  # after the claim: the observer's workers stay idle
            assert direct.row(job_id)["claimed_by"] == owner.id

            proxy.freeze()
            frozen_at = time.monotonic()
            settled_after = wait_until(
                lambda: direct.get(job_id).status is not Status.RUNNING,
                within=LIVENESS_TIMEOUT + 30,
                what="the cut-off runner's job being settled",
            )
            settled_at = frozen_at + settled_after
            print(
                f"partition to handler told: {told[0] - frozen_at:.2f}s; "
                f"to settled by another runner: {settled_after:.2f}s"
            )
            assert told, "the cut-off runner never told its handler to stop"
            assert told[0] < settled_at
            job = direct.get(job_id)
            assert (job.status, job.error) == (Status.FAILED, "interrupted by restart")

            owner.stop()
            returned: list[bool] = []
            joiner = threading.Thread(target=lambda: returned.append(owner.join(timeout=2.0)))
            joiner.start()
            joiner.join(15)  # a deadline for the test, not a measure: join itself gives up at 2 s
            assert not joiner.is_alive(), "join did not return while the database hung"
        finally:
            proxy.close()  # the cut-off connections fail now, and what waited on them ends
            owner.stop_now()
            owner.join(timeout=10)
            observer.stop()
            observer.join(timeout=10)
            cut_off.close()
            direct.close()
