"""Run test code in threads and bring every failure back to the test's own thread.

An ``assert`` that fails inside a thread only prints a warning (pytest turns
it into an error through ``filterwarnings``, see pyproject.toml, but the
test would still go on); this re-raises the first failure where the test can
see it, after every thread has ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


def run_in_threads(targets: Iterable[Callable[[], object]], *, within: float = 120.0) -> None:
    """Start one thread per target, wait for all (up to ``within`` s), re-raise any failure."""
    failures: list[BaseException] = []
    guard = threading.Lock()

    def guarded(target: Callable[[], object]) -> None:
        try:
            target()
        except BaseException as error:
            with guard:
                failures.append(error)

    threads = [threading.Thread(target=guarded, args=(target,), daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(within)
    if any(thread.is_alive() for thread in threads):
        raise AssertionError(f"threads still running after {within}s")
    if failures:
        raise failures[0]
