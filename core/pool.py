"""The runner's worker threads, one per slot: started, replaced when one crashes, joined.

A slot whose handler is left behind goes to a new thread, unless too many are left behind.
"""

from __future__ import annotations

import logging
import threading

from jobtable.core.clock import Clock
from jobtable.core.errors import RunnerStateError
from jobtable.core.recording import loggable_category
from jobtable.core.wakes import SchedulerWakes, WorkerWakes
from jobtable.core.worker import WorkerLoop


def check_count(value: object, what: str) -> None:
    """ValueError unless ``value`` is a whole number of ``what`` (workers, async workers) >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"Runner needs 0 or more {what}, got {value!r}")


def worker_slots(
    kinds: frozenset[str], async_kinds: list[str], *, threads: int, async_workers: int
) -> list[int]:
    """The worker slots a runner starts: the threads' (0 up) unless every kind is async, and
    the async slots' (after them) when some kind is; RunnerStateError when async kinds
    would have no slot."""
    if async_kinds and not async_workers:
        raise RunnerStateError(
            f"kinds {async_kinds} have async def handlers and async_workers is 0: "
            "give the runner async workers (--async-workers N)"
        )
    slots = list(range(threads)) if len(async_kinds) < len(kinds) or not async_kinds else []
    if async_kinds:
        slots += range(threads, threads + async_workers)
    return slots


class WorkerPool:
    """``workers`` threads, each running ``loop`` in its slot.

    A handler that ignores its stop is left behind (core/left_behind.py): its
    slot goes to a new thread, so a stubborn handler cannot shrink the pool.
    Past ``left_behind_cap`` handlers left behind, the slot stays empty until
    one of them returns.
    """

    def __init__(
        self,
        clock: Clock,
        log: logging.Logger,
        *,
        workers: int,
        loop: WorkerLoop,
        wakes: WorkerWakes,
        scheduler: SchedulerWakes,
        left_behind_cap: int | None,
    ) -> None:
        """``left_behind_cap`` defaults to the pool's size; ``scheduler`` hears of every slot
        closed (a stopping scheduler ends with the last)."""
        self._clock = clock
        self._log = log
        self._workers = workers
        self._loop = loop
        self._wakes = wakes
        self._scheduler = scheduler
        self.left_behind_cap = max(1, workers) if left_behind_cap is None else left_behind_cap
        self._done = threading.Condition()  # join waits here for workers to exit
        self._live = 0
        self._left_behind = 0  # handlers that ignored a stop, still running
        self._empty_slots: list[int] = []  # not refilled while past the cap

    def start(self, slots: list[int] | None = None) -> None:
        """Start a worker in each of ``slots`` (default: one per worker, 0 up)."""
        numbers = list(range(self._workers)) if slots is None else slots
        with self._done:
            self._live = len(numbers)
        for number in numbers:
            self._start_worker(number)

    @property
    def live(self) -> int:
        """Worker threads running now (slots left empty count until the runner stops)."""
        with self._done:
            return self._live

    def none_left(self) -> bool:
        return self._live == 0  # one read of an int: no lock needed, none taken

    def stop(self) -> None:
        """The runner stops: close the slots left empty, nothing is left to wait for in them."""
        with self._done:
            if self._empty_slots:
                self._live -= len(self._empty_slots)
                self._empty_slots.clear()
                self._done.notify_all()
        self._scheduler.workers_changed()

    def join(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds for every slot to close; True if they all did."""
        return self._clock.wait_for(self._done, self.none_left, timeout)

    def left_behind(self, slot: int) -> tuple[int, bool]:
        """The handler in ``slot`` is left behind: how many are now, and whether to refill
        its slot (else it stays empty, or closes when stopping)."""
        with self._done:  # counted before its handler can return and count down
            self._left_behind += 1
            count = self._left_behind
            stopping = self._wakes.stopping
            refill = count <= self.left_behind_cap and not stopping
            if stopping:
                self._live -= 1
                self._done.notify_all()
            elif not refill:
                self._empty_slots.append(slot)
        return count, refill

    def refill(self, slot: int) -> None:
        """Start a worker in ``slot``; should even that fail, close the slot."""
        if not self._replace_worker(slot):
            self._close_slot()

    def _start_worker(self, number: int) -> None:
        threading.Thread(
            target=self._run_worker, args=(number,), name=f"jobtable-worker-{number}", daemon=True
        ).start()

    def _run_worker(self, number: int) -> None:
        """One worker thread: its loop until stopped; a worker that crashes is replaced."""
        replace = False
        left_behind = False
        try:
            left_behind = self._loop.work(number)
        except BaseException as error:
            # Our own bug, or a store raising past Exception: the pool must keep its size.
            self._log.error(
                "worker crashed; starting another worker=%d category=%s",
                number,
                loggable_category(error),
            )
            replace = not self._wakes.stopping
        finally:
            if left_behind:
                self._left_behind_returned()
            else:
                if replace:
                    replace = self._replace_worker(number)
                if not replace:
                    self._close_slot()

    def _replace_worker(self, number: int) -> bool:
        """Start a worker in a crashed one's place; False if even that fails (no threads left)."""
        try:
            self._start_worker(number)
        except Exception as error:
            self._log.error(
                "could not start a worker in place of one that crashed category=%s",
                loggable_category(error),
            )
            return False
        return True

    def _close_slot(self) -> None:
        """A worker's slot is given up for good: join, and the scheduler, may be waiting."""
        with self._done:
            self._live -= 1
            self._done.notify_all()
        self._scheduler.workers_changed()

    def _left_behind_returned(self) -> None:
        """A handler left behind returned at last: refill a slot left empty past the cap."""
        with self._done:
            self._left_behind -= 1
            slot = (
                self._empty_slots.pop() if self._empty_slots and not self._wakes.stopping else None
            )
        if slot is not None:
            self.refill(slot)
