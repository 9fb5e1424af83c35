"""Which queue and kind names the job counts are labelled by: a bounded few, the rest ``other``.

Queue names come with each enqueue, chosen by whoever enqueues, so one
series per name would grow a scrape (and the scraper's storage) with them.
At most ``LABEL_VALUES`` values of each label are shown; past that, the
names kept are the ones operators chose (the queues and kinds of this
process's registrations and of live runners), then the deepest backlogs
(due jobs, then every unfinished one, then by name, so the choice is the
same for the same counts), and every other name's jobs are summed under
``other``: a backlog nobody serves still shows, under its own name or there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping

import attrs

from jobtable.core.jobs import JobCount

OTHER = "other"
"""The label value that sums every name not kept (a queue or kind named ``other`` too, once
any name is folded, so one label value never names two series)."""

LABEL_VALUES = 100
"""The most values a label takes in one scrape, ``other`` included."""


@attrs.frozen(kw_only=True)
class Labels:
    """The queue and kind names kept for one scrape; ``queue``/``kind`` map any name to its label."""

    queues: frozenset[str]
    kinds: frozenset[str]

    def queue(self, name: str) -> str:
        return name if name in self.queues else OTHER

    def kind(self, name: str) -> str:
        return name if name in self.kinds else OTHER

    def counts(
        self, counts: Iterable[JobCount], *, by_state: bool = False
    ) -> dict[tuple[str, str, str], int]:
        """``counts`` summed by (queue label, kind label, status), or state ``by_state``."""
        summed: Counter[tuple[str, str, str]] = Counter()
        for count in counts:
            split = count.state if by_state else count.status
            summed[(self.queue(count.queue), self.kind(count.kind), split)] += count.count
        return dict(summed)


def choose_labels(
    counts: Collection[JobCount],
    *,
    queues: Collection[str],
    kinds: Collection[str],
    limit: int = LABEL_VALUES,
) -> Labels:
    """The names to label ``counts`` by: ``queues`` and ``kinds`` (operators' names) first."""
    return Labels(
        queues=_kept(_depths(counts, lambda count: count.queue), queues, limit),
        kinds=_kept(_depths(counts, lambda count: count.kind), kinds, limit),
    )


def _depths(
    counts: Iterable[JobCount], name_of: Callable[[JobCount], str]
) -> dict[str, tuple[int, int]]:
    """Each name's (due jobs, unfinished jobs)."""
    depths: dict[str, tuple[int, int]] = {}
    for count in counts:
        name = name_of(count)
        due, unfinished = depths.get(name, (0, 0))
        due += count.count if count.status == "queued" else 0
        depths[name] = (due, unfinished + count.count)
    return depths


def _kept(
    depths: Mapping[str, tuple[int, int]], preferred: Collection[str], limit: int
) -> frozenset[str]:
    chosen = frozenset(preferred)
    names = set(depths) | chosen
    if len(names) <= limit:
        return frozenset(names)

    def rank(name: str) -> tuple[bool, int, int, str]:
        due, unfinished = depths.get(name, (0, 0))
        return (name not in chosen, -due, -unfinished, name)

    return frozenset(sorted(names - {OTHER}, key=rank)[: limit - 1])  # one value left for OTHER
