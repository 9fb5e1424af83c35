"""Background threads that outlive their own bugs: a loop that raises is logged and restarted.

The scheduler, the registration's check and sweep, and retention each run one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from jobtable.core.backoff import next_claim_retry_delay
from jobtable.core.clock import Clock
from jobtable.core.recording import loggable_category

STEADY_AFTER = 60.0
"""Seconds a loop must have run before its restart delay starts again from the shortest."""


def start_loop(
    name: str,
    loop: Callable[[], None],
    *,
    clock: Clock,
    log: logging.Logger,
    ended: Callable[[], bool],
) -> threading.Thread:
    """Start ``loop`` on a daemon thread called ``name``, restarted whenever it raises.

    Should a loop die (a bug of ours, a store raising past ``Exception``), the
    runner would go on without it: delayed jobs never due, dead runners never
    settled. A loop that returns has ended; one that raises is logged by its
    name and the error's category (never its text), then started again after
    the claim-retry backoff, unless ``ended()`` says the runner is done with it.
    """
    thread = threading.Thread(
        target=keep_looping, args=(name, loop, clock, log, ended), name=name, daemon=True
    )
    thread.start()
    return thread


def keep_looping(
    name: str,
    loop: Callable[[], None],
    clock: Clock,
    log: logging.Logger,
    ended: Callable[[], bool],
) -> None:
    """Run ``loop`` until it returns; after each raise, log, wait the backoff and run it again."""
    delay: float | None = None
    pause = threading.Condition()  # nobody notifies it: the wait is the backoff
    while True:
        began = clock.monotonic()
        try:
            loop()
            return
        except BaseException as error:
            if ended():
                return
            if clock.monotonic() - began >= STEADY_AFTER:
                delay = None
            delay = next_claim_retry_delay(delay)
            log.error(
                "background thread crashed; restarting it thread=%s category=%s restart_in=%.3fs",
                name,
                loggable_category(error),
                delay,
            )
        clock.wait_for(pause, ended, delay)
        if ended():
            return
