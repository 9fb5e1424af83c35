"""jobtable's pure core: the Runner, the kind registry and their policies.

Nothing here does I/O; the database and the clock come in through the
``JobStore`` and ``Clock`` ports.
"""

from jobtable.core.builtins import NOOP, NoopPayload, NoopResult
from jobtable.core.bulk import BulkAction, BulkFilter, BulkResult
from jobtable.core.clock import Clock
from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT, UNKNOWN_KIND
from jobtable.core.context import JobContext, JobNotHeldError
from jobtable.core.enqueue_options import EnqueueOptions, InvalidOptionError, Unique
from jobtable.core.errors import (
    Failure,
    InvalidPayloadError,
    JobNotFoundError,
    RegistrationError,
    RunnerStateError,
    Snooze,
    StoreError,
    StoreUnavailableError,
    UnknownKindError,
)
from jobtable.core.jobs import (
    CancelOutcome,
    Claim,
    ClaimedJob,
    Enqueued,
    Job,
    JobDetail,
    NewJob,
    QueueState,
    Recovered,
)
from jobtable.core.kind_handle import Kind
from jobtable.core.kinds import KindRegistry
from jobtable.core.limits import Limit, Rate
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
from jobtable.core.states import State
from jobtable.core.status import Status

__all__ = [
    "CANCELLED",
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "NOOP",
    "TIMED_OUT",
    "UNKNOWN_KIND",
    "BulkAction",
    "BulkFilter",
    "BulkResult",
    "CancelOutcome",
    "Claim",
    "ClaimedJob",
    "Clock",
    "DeadRunner",
    "EnqueueOptions",
    "Enqueued",
    "Failure",
    "InvalidOptionError",
    "InvalidPayloadError",
    "Job",
    "JobContext",
    "JobDetail",
    "JobNotFoundError",
    "JobNotHeldError",
    "JobStore",
    "Kind",
    "KindRegistry",
    "Limit",
    "LivenessTerms",
    "LockState",
    "NewJob",
    "NoopPayload",
    "NoopResult",
    "QueueState",
    "Rate",
    "Recovered",
    "RegistrationError",
    "Runner",
    "RunnerInfo",
    "RunnerRecord",
    "RunnerSighting",
    "RunnerStateError",
    "Snooze",
    "State",
    "Status",
    "StoreError",
    "StoreUnavailableError",
    "Unique",
    "UnknownKindError",
]
