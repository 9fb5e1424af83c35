"""jobtable: a durable background-job runner a Python web application embeds.

The public API is what ``__all__`` lists; everything else is an implementation
detail that may change. The pure core (``Runner``, ``Failure``, ``JobContext``,
...) is imported at once; the stores, the clock, ``Client`` and the HTTP app are
imported the first time they are used, so an application that only enqueues
through SQLite never imports psycopg or Falcon.

    from jobtable import Client, Failure, JobContext, Runner, SqliteStore, SystemClock

The repository keeps the folders ``core/``, ``adapters/``, ``entrypoints/`` and
``migrations/`` at its top; they are installed as ``jobtable.core``,
``jobtable.adapters``, ``jobtable.entrypoints`` and ``jobtable.migrations``, so
nothing of ours can clash with an application's own ``core`` package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jobtable.core import (
    CANCELLED,
    INTERNAL_ERROR,
    INTERRUPTED,
    TIMED_OUT,
    UNKNOWN_KIND,
    BulkAction,
    BulkFilter,
    BulkResult,
    CancelOutcome,
    Clock,
    Enqueued,
    EnqueueOptions,
    Failure,
    InvalidOptionError,
    InvalidPayloadError,
    Job,
    JobContext,
    JobDetail,
    JobNotFoundError,
    JobNotHeldError,
    JobStore,
    Kind,
    KindRegistry,
    Limit,
    QueueState,
    Rate,
    RegistrationError,
    Runner,
    RunnerStateError,
    Snooze,
    State,
    Status,
    StoreError,
    StoreUnavailableError,
    Unique,
    UnknownKindError,
)

if TYPE_CHECKING:
    from jobtable.adapters.memory import MemoryStore
    from jobtable.adapters.postgres import PostgresStore
    from jobtable.adapters.sqlite import SqliteStore
    from jobtable.adapters.system_clock import SystemClock
    from jobtable.adapters.testkit import JobTestKit
    from jobtable.entrypoints.async_client import AsyncClient
    from jobtable.entrypoints.embedded_client import Client
    from jobtable.entrypoints.http.app import create_app
    from jobtable.entrypoints.metrics import JobMetrics

_LAZY = {
    "AsyncClient": "jobtable.entrypoints.async_client",
    "Client": "jobtable.entrypoints.embedded_client",
    "MemoryStore": "jobtable.adapters.memory",
    "PostgresStore": "jobtable.adapters.postgres",
    "SqliteStore": "jobtable.adapters.sqlite",
    "SystemClock": "jobtable.adapters.system_clock",
    "JobTestKit": "jobtable.adapters.testkit",
    "create_app": "jobtable.entrypoints.http.app",
    "JobMetrics": "jobtable.entrypoints.metrics",
}

__all__ = [
    "CANCELLED",
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "TIMED_OUT",
    "UNKNOWN_KIND",
    "AsyncClient",
    "BulkAction",
    "BulkFilter",
    "BulkResult",
    "CancelOutcome",
    "Client",
    "Clock",
    "EnqueueOptions",
    "Enqueued",
    "Failure",
    "InvalidOptionError",
    "InvalidPayloadError",
    "Job",
    "JobContext",
    "JobDetail",
    "JobMetrics",
    "JobNotFoundError",
    "JobNotHeldError",
    "JobStore",
    "JobTestKit",
    "Kind",
    "KindRegistry",
    "Limit",
    "MemoryStore",
    "PostgresStore",
    "QueueState",
    "Rate",
    "RegistrationError",
    "Runner",
    "RunnerStateError",
    "Snooze",
    "SqliteStore",
    "State",
    "Status",
    "StoreError",
    "StoreUnavailableError",
    "SystemClock",
    "Unique",
    "UnknownKindError",
    "__version__",
    "create_app",
]


def __getattr__(name: str) -> Any:
    """Import a store, the clock or the HTTP app on first use (PEP 562)."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("jobtable")
        except PackageNotFoundError:
            return "dev"
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'jobtable' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as missing:
        if name == "PostgresStore" and missing.name and missing.name.startswith("psycopg"):
            raise ImportError(
                "PostgresStore needs psycopg: pip install 'jobtable[postgres]'"
            ) from None
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
