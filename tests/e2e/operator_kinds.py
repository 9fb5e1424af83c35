"""Kinds for the operator's browser test: one for each way a job ends or waits.

``hold`` runs until the test's gate lets it go (or it is told to stop); ``boom`` raises an
exception whose message must never reach a page; ``card`` keeps a card number the page
must redact; ``patient`` fails and retries ten minutes later; a schedule ticks nightly.
"""

from __future__ import annotations

import threading

import attrs

from jobtable import Failure, JobContext

SECRET_MESSAGE = "message-that-must-stay-in-the-log-9f2c"
CARD_NUMBER = "4111-1111-1111-1111"


@attrs.frozen
class Empty:
    pass


@attrs.frozen
class Card:
    number: str
    holder: str


@attrs.frozen
class Done:
    def public(self):
        return {"done": True}


def register(kinds, release: threading.Event) -> None:
    def hold(ctx: JobContext, payload: Empty) -> Done:
        while not release.is_set():
            if ctx.wait(0.02):
                raise RuntimeError("told to stop")
        return Done()

    def boom(ctx: JobContext, payload: Empty) -> Done:
        raise ValueError(SECRET_MESSAGE)

    def charge(ctx: JobContext, payload: Card) -> Done:
        raise Failure("declined")

    def patient(ctx: JobContext, payload: Empty) -> Done:
        raise Failure("flaky")

    held = kinds.register("hold", hold, payload=Empty, timeout=3600)
    kinds.register("boom", boom, payload=Empty)
    kinds.register("card", charge, payload=Card, failure_codes=["declined"], redact=["number"])
    kinds.register("patient", patient, payload=Empty, failure_codes=["flaky"],
                   retry_on=["flaky"], max_attempts=3, backoff=(600, 600))  # fmt: skip
    kinds.cron("30 2 * * *", held, Empty(), name="nightly-report", timezone="Europe/Paris")
