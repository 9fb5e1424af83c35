"""Exceptions the core raises or expects from its ports."""

from __future__ import annotations


class Failure(Exception):
    """Raised by a handler to fail its job with a failure code its kind declared.

    Only ``code`` is ever stored; a code the kind did not declare is stored as
    ``internal_error``. Carry no other data: nothing else reaches the table.
    """

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code

    def __str__(self) -> str:
        return f"failure {self.code}"


SNOOZE_AT_MOST = 100 * 365 * 86400


class Snooze(Exception):
    """Raised by a handler to run its job again after ``seconds``, without using an attempt.

    For work that is not ready yet (a rate limit, a file still arriving), as
    Oban's snooze: the job is queued again, due ``seconds`` from now, its
    attempt given back and its last partial result kept.
    """

    def __init__(self, seconds: float) -> None:
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 <= seconds <= SNOOZE_AT_MOST
        ):
            raise ValueError(f"Snooze needs seconds from 0 to {SNOOZE_AT_MOST} (a century)")
        super().__init__(seconds)
        self.seconds = float(seconds)

    def __str__(self) -> str:
        return f"snooze {self.seconds}s"


class RegistrationError(ValueError):
    """A kind registration the runner refuses; the message says which rule it broke."""


class RunnerStateError(RuntimeError):
    """A runner call made in the wrong state (a second start, a registration after start)."""


STORE_ERROR_CATEGORIES = frozenset(
    {"database error", "database locked", "database unavailable", "database closed"}
)


class StoreError(Exception):
    """A store could not do what was asked because of its database.

    ``category`` is one of a few fixed phrases, safe to log or show. The
    driver's own message may quote data or a URL, so callers log only the
    category, never ``str(error)``; any other category given is replaced by
    "database error", so a careless adapter cannot smuggle text through it.
    """

    def __init__(self, category: str = "database error") -> None:
        if category not in STORE_ERROR_CATEGORIES:
            category = "database error"
        super().__init__(category)
        self.category = category


class JobNotFoundError(LookupError):
    """No job has this id (never had, or it was pruned): raised by a client's ``wait`` and
    ``follow``, where there is no job to return (``get`` returns None instead)."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"no job {job_id!r}")
        self.job_id = job_id


class UnknownKindError(LookupError):
    """An enqueue by name for a kind with no registered handler; nothing was stored."""

    def __init__(self, kind: str) -> None:
        super().__init__("unknown job kind")
        self.kind = kind


PROBLEMS_SHOWN = 10
"""How many of a payload's problems its error's message lists (``problems`` has them all)."""


class InvalidPayloadError(ValueError):
    """An enqueue whose payload does not fit the kind; nothing was stored.

    ``problems`` name each offending field path and what was expected, never
    a submitted value, so they (and the message, which lists them) are safe to
    show to whoever sent the payload.
    """

    def __init__(self, kind: str, problems: tuple[str, ...]) -> None:
        shown = "; ".join(problems[:PROBLEMS_SHOWN])
        more = len(problems) - PROBLEMS_SHOWN
        if more > 0:
            shown += f" (and {more} more)"
        super().__init__(f"payload does not match the job kind {kind!r}: {shown}")
        self.kind = kind
        self.problems = problems


class StoreUnavailableError(StoreError):
    """The database cannot be reached now; trying again later may work."""


class LivenessLockLostError(StoreUnavailableError):
    """A runner's liveness lock is certainly not held and could not be taken again.

    Unlike a check that got no answer, this is known: the server answered (or
    the lock file could not be made), so other runners can see the lock
    absent. The owner must stop its handlers soon (core/liveness.py).
    """

    def __init__(self) -> None:
        super().__init__("database unavailable")


class InvalidOptionError(ValueError):
    """An option (of an enqueue, a kind or a queue) that cannot be used; ``field`` names it, the message says why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem
