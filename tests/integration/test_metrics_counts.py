"""A scrape never waits on a slow count: while counts are quick each scrape reads them; once one
was slow, scrapes answer with the latest (and its age) while one read runs in the background.
And whatever queue names clients choose, a scrape of a real database stays bounded."""

from __future__ import annotations

import threading
from contextlib import ExitStack

import falcon.testing
import pytest
from prometheus_client.parser import text_string_to_metric_families

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import Runner, RunnerInfo
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.core.errors import StoreUnavailableError
from jobtable.core.jobs import JobCount
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.metrics import JobMetrics
from jobtable.entrypoints.metrics_counts import CountsReader
from tests.support.stores import open_store


class FakeCounts:
    """A count whose cost and answer the test sets; each read returns the next answer."""

    def __init__(self) -> None:
        self.now = 100.0
        self.cost = 0.001
        self.reads = 0
        self.fail = False
        self.gate = threading.Event()
        self.gate.set()  # reads pass unless a test closes it
        self.changed = threading.Lock()

    def clock(self) -> float:
        return self.now

    def read(self) -> list[JobCount]:
        assert self.gate.wait(10)
        with self.changed:
            self.reads += 1
            self.now += self.cost
            if self.fail:
                raise StoreUnavailableError("database unavailable")
            return [JobCount(queue="default", kind="mail", status="queued", count=self.reads)]


@pytest.fixture
def fake() -> FakeCounts:
    return FakeCounts()


def counted(answer) -> tuple[int, float]:
    counts, age = answer
    return counts[0].count, age


def test_quick_counts_are_read_at_every_scrape(fake):
    reader = CountsReader(fake.read, clock=fake.clock)
    assert [counted(reader.counts()) for _ in range(3)] == [(1, 0.0), (2, 0.0), (3, 0.0)]


def test_after_a_slow_count_scrapes_answer_with_the_latest_and_read_again_in_the_background(fake):
    reader = CountsReader(fake.read, clock=fake.clock, slow=0.025)
    fake.cost = 1.0
    assert counted(reader.counts()) == (1, 0.0)  # read by the scrape itself, slowly

    fake.gate.clear()  # the background read waits here until the test lets it go
    fake.now += 5
    assert counted(reader.counts()) == (1, pytest.approx(6.0))  # at once, 6 s old
    assert counted(reader.counts()) == (1, pytest.approx(6.0))  # no second background read
    fake.gate.set()
    wait_until_idle()
    assert fake.reads == 2
    assert counted(reader.counts())[0] == 2  # the background read's counts
    wait_until_idle()  # the next background read, started by that scrape


def test_once_counting_is_quick_again_scrapes_read_for_themselves(fake):
    reader = CountsReader(fake.read, clock=fake.clock, slow=0.025)
    fake.cost = 1.0
    reader.counts()  # slow
    fake.cost = 0.001
    reader.counts()  # served from the latest; a quick read starts behind it
    wait_until_idle()
    assert counted(reader.counts()) == (3, 0.0)


def test_a_background_read_that_fails_is_forgotten_and_the_next_scrape_says_so(fake):
    reader = CountsReader(fake.read, clock=fake.clock, slow=0.025)
    fake.cost = 1.0
    reader.counts()
    fake.fail = True
    fake.gate.clear()
    assert counted(reader.counts()) == (1, pytest.approx(1.0))  # the latest, while it reads
    fake.gate.set()
    wait_until_idle()
    assert fake.reads == 2
    with pytest.raises(StoreUnavailableError):
        reader.counts()


def wait_until_idle() -> None:
    """Until the background read has finished: its thread ends right after."""
    for thread in threading.enumerate():
        if thread.name == "jobtable-metrics-counts":
            thread.join(10)
            assert not thread.is_alive()


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_jobs_in_2000_client_chosen_queues_scrape_as_at_most_100_queue_labels(engine, tmp_path):
    with ExitStack() as stack:
        store = open_store(engine, tmp_path, stack)
        stack.callback(store.close)
        clock = FakeClock()
        runner = Runner(store, clock, observer=JobMetrics())
        # Another process serves "mail" alone: its queue keeps its name however many others.
        mail_worker = RunnerInfo(
            id="mail-worker", host="h", pid=1, started_at=clock.now(), kinds=("noop",),
            queues=("mail",), workers=1,
        )  # fmt: skip
        store.register_runner(mail_worker, now=clock.now())
        stack.callback(store.unregister_runner, "mail-worker")
        chosen = [f"client-{n:04d}" for n in range(2000) for _ in range(2)] + ["mail"]
        runner.enqueue_batch(
            [runner.encode("noop", {}, EnqueueOptions(queue=queue)) for queue in chosen]
        )
        token = "metrics-token"
        client = falcon.testing.TestClient(create_app(runner, api_token=token))
        answer = client.simulate_get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text

    jobs = {
        (sample.labels["queue"], sample.labels["status"]): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
        if sample.name == "jobtable_jobs"
    }
    assert len({queue for queue, _ in jobs}) == 100
    assert len(jobs) == 300
    assert jobs[("mail", "queued")] == 1  # shallower than every client queue, and served
    assert jobs[("default", "queued")] == 0  # the queue of the kind registered here
    assert jobs[("other", "queued")] == 2 * (2000 - 97)  # 97 client queues keep their names
    assert sum(jobs.values()) == len(chosen)
    assert len(answer.content) < 80_000  # 418,883 bytes before the bound (by status, by state)
