"""Logging a run of failures: a warning at the first, one error if it lasts, a line when it ends."""

from __future__ import annotations

import logging

from jobtable.core.recording import loggable_category


class FailureStreak:
    """Logs the first failure of a streak as a warning, one error if it lasts, and the recovery."""

    def __init__(self, log: logging.Logger, what: str, *, error_after: float = 5.0) -> None:
        self._log = log
        self._what = what
        self._error_after = error_after
        self._since: float | None = None
        self._escalated = False

    def failed(self, error: Exception, at: float) -> None:
        category = loggable_category(error)
        if self._since is None:
            self._since = at
            self._log.warning("%s failed category=%s", self._what, category)
        elif not self._escalated and at - self._since >= self._error_after:
            self._escalated = True
            self._log.error(
                "%s failing for %.1fs category=%s", self._what, at - self._since, category
            )

    def succeeded(self, at: float) -> None:
        if self._since is not None:
            self._log.info("%s works again after %.1fs", self._what, at - self._since)
        self._since = None
        self._escalated = False
