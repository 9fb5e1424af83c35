"""jobtable's pure core: the Runner, the kind registry and their policies.

Nothing here does I/O; the database and the clock come in through the
``JobStore`` and ``Clock`` ports.
"""

from jobtable.core.builtins import NOOP, NoopPayload, NoopResult
from jobtable.core.clock import Clock
from jobtable.core.codes import INTERNAL_ERROR, INTERRUPTED, UNKNOWN_KIND
from jobtable.core.context import JobContext, JobNotHeldError
from jobtable.core.errors import (
    Failure,
    InvalidPayloadError,
    RegistrationError,
    RunnerStateError,
    StoreError,
    StoreUnavailableError,
    UnknownKindError,
)
from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from jobtable.core.kinds import Kind, KindRegistry
from jobtable.core.liveness import (
    DeadRunner,
    LivenessTerms,
    LockState,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
)
from jobtable.core.ports import JobStore
from jobtable.core.runner import Runner
from jobtable.core.status import Status

__all__ = [
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "NOOP",
    "UNKNOWN_KIND",
    "Claim",
    "ClaimedJob",
    "Clock",
    "DeadRunner",
    "Failure",
    "InvalidPayloadError",
    "Job",
    "JobContext",
    "JobNotHeldError",
    "JobStore",
    "Kind",
    "KindRegistry",
    "LivenessTerms",
    "LockState",
    "NewJob",
    "NoopPayload",
    "NoopResult",
    "Recovered",
    "RegistrationError",
    "Runner",
    "RunnerInfo",
    "RunnerRecord",
    "RunnerSighting",
    "RunnerStateError",
    "Status",
    "StoreError",
    "StoreUnavailableError",
    "UnknownKindError",
]
