"""Who hears a shared session's notifications (shared_session.py): each subscriber's
channel and callback, told each payload of its channel, told to look (``None``) after a
reconnect and every fallback interval, and never told again once it has stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

Heard = Callable[[str | None], None]
"""A subscriber: a notification's payload, or None when anything may have changed unheard."""


class Subscription:
    """One subscriber's channel and callback; ``stop`` ends it."""

    def __init__(
        self, channel: str, heard: Heard, fallback_interval: float, stop: Callable[[], None]
    ) -> None:
        self.channel = channel
        self.heard = heard
        self.fallback_interval = fallback_interval
        self.looked = time.monotonic()
        self.connection = None
        """No connection of its own (a forked child lets go of the session's)."""
        self._stop = stop

    def stop(self) -> None:
        self._stop()


class Subscribers:
    def __init__(self, logger: logging.Logger) -> None:
        self._log = logger
        self.telling = threading.RLock()
        """Held while subscribers are told: one that stops is told nothing after (unless it
        stops itself from its callback)."""
        self.all: list[Subscription] = []

    def channels(self) -> list[str]:
        return sorted({subscription.channel for subscription in self.all})

    def tell(self, heard: list[tuple[str, str]]) -> None:
        """Each (channel, payload) to that channel's subscribers; an empty payload is a look."""
        if not heard:
            return
        with self.telling:
            subscriptions = list(self.all)
            for channel, payload in heard:
                for subscription in subscriptions:
                    if subscription.channel == channel:
                        self._tell(subscription, payload or None)

    def look_all(self) -> None:
        with self.telling:
            for subscription in list(self.all):
                self._tell(subscription, None)

    def look_when_due(self) -> None:
        """Every subscriber's fallback interval, whatever was heard: a notice lost on the way."""
        now = time.monotonic()
        with self.telling:
            for subscription in list(self.all):
                if now - subscription.looked >= subscription.fallback_interval:
                    self._tell(subscription, None)

    def _tell(self, subscription: Subscription, payload: str | None) -> None:
        if payload is None:  # notices about other jobs never stand in for a look
            subscription.looked = time.monotonic()
        try:
            subscription.heard(payload)
        except Exception:  # a subscriber's fault must not end everyone's wakes
            self._log.exception("a subscriber to %s failed", subscription.channel)
