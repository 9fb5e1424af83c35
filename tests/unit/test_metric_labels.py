"""Which queue and kind names label the job counts: every name while they are few; past the
bound, the operators' names, then the deepest backlogs, and ``other`` for the rest."""

from __future__ import annotations

import random

from jobtable.core.jobs import JobCount
from jobtable.core.metric_labels import LABEL_VALUES, OTHER, choose_labels


def jobs(queue: str, count: int, status: str = "queued", kind: str = "mail") -> JobCount:
    return JobCount(queue=queue, kind=kind, status=status, count=count)


def client_queues(number: int) -> list[JobCount]:
    """One due job in each of ``number`` queues a client named."""
    return [jobs(f"client-{n:04d}", 1) for n in range(number)]


def test_while_the_names_fit_each_is_its_own_label_a_queue_named_other_too():
    counts = [*client_queues(LABEL_VALUES - 2), jobs(OTHER, 3)]
    labels = choose_labels(counts, queues={"default"}, kinds={"mail"})
    assert labels.queues == {count.queue for count in counts} | {"default"}
    assert len(labels.queues) == LABEL_VALUES
    assert labels.counts(counts)[(OTHER, "mail", "queued")] == 3


def test_past_the_bound_the_operators_queues_then_the_deepest_backlogs_keep_their_names():
    unserved_backlog = jobs("client-0500", 40)  # nobody serves it: it must still show
    later_backlog = jobs("client-0600", 40, status="scheduled")  # as many, none due yet
    counts = [
        *client_queues(2000),
        unserved_backlog,
        later_backlog,
        jobs("mail", 2),
        jobs("reports", 1, status="running"),
    ]
    labels = choose_labels(counts, queues={"mail", "reports", "idle"}, kinds={"mail"})

    assert len(labels.queues) == LABEL_VALUES - 1  # and OTHER: 100 values in all
    assert {"mail", "reports", "idle", "client-0500", "client-0600"} <= labels.queues
    # The rest of the places go to the one-job queues first by name: the same counts
    # always choose the same names.
    kept_clients = labels.queues - {"mail", "reports", "idle", "client-0500", "client-0600"}
    assert sorted(kept_clients) == [f"client-{n:04d}" for n in range(LABEL_VALUES - 6)]

    summed = labels.counts(counts)
    assert summed[("client-0500", "mail", "queued")] == 41
    assert summed[(OTHER, "mail", "queued")] == 2000 - (LABEL_VALUES - 6) - 2
    assert sum(summed.values()) == sum(count.count for count in counts)


def test_a_queue_named_other_is_summed_with_the_rest_once_any_name_is():
    counts = [*client_queues(200), jobs(OTHER, 500)]
    labels = choose_labels(counts, queues=set(), kinds={"mail"})
    assert OTHER not in labels.queues  # the deepest, but one label value means one thing
    assert labels.counts(counts)[(OTHER, "mail", "queued")] == 500 + 200 - (LABEL_VALUES - 1)


def test_the_choice_does_not_depend_on_the_order_the_counts_come_in():
    counts = [*client_queues(300), *(jobs(f"deep-{n}", n % 7 + 1) for n in range(300))]
    first = choose_labels(counts, queues={"mail"}, kinds={"mail"})
    random.Random(7).shuffle(counts)
    assert choose_labels(counts, queues={"mail"}, kinds={"mail"}) == first


def test_kinds_are_bounded_the_same_way_registered_ones_first():
    counts = [jobs("default", 1, kind=f"legacy_{n:03d}") for n in range(150)]
    counts.append(jobs("default", 9, kind="legacy_149"))
    labels = choose_labels(counts, queues={"default"}, kinds={"mail"})
    assert len(labels.kinds) == LABEL_VALUES - 1
    assert {"mail", "legacy_149", "legacy_000"} <= labels.kinds
    assert labels.kind("legacy_148") == OTHER
    assert labels.queues == {"default"}


def test_operators_names_past_the_bound_are_chosen_by_depth_too():
    served = {f"served-{n:03d}" for n in range(150)}
    counts = [jobs("served-149", 5)]
    labels = choose_labels(counts, queues=served, kinds={"mail"})
    assert len(labels.queues) == LABEL_VALUES - 1
    assert "served-149" in labels.queues
    assert labels.queue("served-148") == OTHER


def test_jobs_due_now_outrank_jobs_due_later_then_the_most_unfinished_then_the_name():
    counts = [
        jobs("later", 50, status="scheduled"),
        jobs("due", 10),
        jobs("due_and_running", 5),
        jobs("due_and_running", 9, status="running"),
        jobs("few", 5),
        jobs("also_few", 5),
    ]
    labels = choose_labels(counts, queues=set(), kinds={"mail"}, limit=4)
    assert labels.queues == {"due", "due_and_running", "also_few"}
    assert labels.counts(counts)[(OTHER, "mail", "queued")] == 5
    assert labels.counts(counts)[(OTHER, "mail", "scheduled")] == 50
