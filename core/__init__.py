"""jobtable's pure core: the Runner, the kind registry and their policies.

Nothing here does I/O; the database and the clock come in through the
``JobStore`` and ``Clock`` ports.
"""

from core.builtins import NOOP, NoopPayload, NoopResult
from core.clock import Clock
from core.codes import INTERNAL_ERROR, INTERRUPTED, UNKNOWN_KIND
from core.context import JobContext, JobNotHeldError
from core.errors import (
    Failure,
    InvalidPayloadError,
    RegistrationError,
    RunnerStateError,
    StoreError,
    StoreUnavailableError,
    UnknownKindError,
)
from core.jobs import Claim, ClaimedJob, Job, NewJob
from core.kinds import Kind, KindRegistry
from core.ports import JobStore
from core.runner import Runner
from core.status import Status

__all__ = [
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "NOOP",
    "UNKNOWN_KIND",
    "Claim",
    "ClaimedJob",
    "Clock",
    "Failure",
    "InvalidPayloadError",
    "Job",
    "JobContext",
    "JobNotHeldError",
    "JobStore",
    "Kind",
    "KindRegistry",
    "NewJob",
    "NoopPayload",
    "NoopResult",
    "RegistrationError",
    "Runner",
    "RunnerStateError",
    "Status",
    "StoreError",
    "StoreUnavailableError",
    "UnknownKindError",
]
