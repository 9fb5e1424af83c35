"""What POST /api/v1/jobs and /api/v1/jobs/batch accept, checked before anything is stored.

A job request is ``kind``, ``payload`` and the optional enqueue options;
unknown fields are refused, as the reference refused them. A batch is
``{"jobs": [...]}`` of such requests, every one checked and encoded before
any is stored, its first refusal naming the item's index.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from jobtable.core import InvalidPayloadError, Runner, UnknownKindError
from jobtable.core.enqueue_options import EnqueueOptions, InvalidOptionError
from jobtable.core.kind_spec import EncodedJob
from jobtable.entrypoints.http.body import parse_json_object
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.job_options import OPTION_FIELDS, options_from_json

JOB_FIELDS = ("kind", "payload", *OPTION_FIELDS)
JOB_SHAPE = "request body must be a JSON object with kind and payload"
BATCH_SHAPE = "request body must be a JSON object with jobs, a list of jobs"
MAX_BATCH = 1000
_NAMED = "kind, payload, " + ", ".join(OPTION_FIELDS[:-1]) + " and " + OPTION_FIELDS[-1]


@attrs.frozen(kw_only=True)
class JobRequest:
    kind: str
    payload: Any
    options: EnqueueOptions


def parse_job_request(data: bytes) -> JobRequest:
    """The job a POST /api/v1/jobs body asks for; a 400 naming the first problem otherwise."""
    return _job(parse_json_object(data, shape=JOB_SHAPE), where="")


def encode_batch(runner: Runner, data: bytes) -> list[EncodedJob]:
    """The jobs of a batch body, checked and encoded in order, storing nothing.

    Each job is checked whole (its fields, options, kind and payload) before
    the next, so the refusal, a 400, names the first bad job's index.
    """
    body = parse_json_object(data, shape=BATCH_SHAPE, wrapping=2)
    _no_unknown_fields(body, ("jobs",), "the body has only jobs", where="")
    jobs = body.get("jobs")
    if not isinstance(jobs, list) or not 1 <= len(jobs) <= MAX_BATCH:
        raise api_error(400, "invalid_request", f"jobs: must be a list of 1 to {MAX_BATCH} jobs")
    encoded = []
    for index, item in enumerate(jobs):
        where = f"jobs[{index}]: "
        if not isinstance(item, dict):
            raise api_error(
                400, "invalid_request", f"{where}must be a JSON object with kind and payload"
            )
        request = _job(item, where=where)
        with refusals(where):
            encoded.append(runner.encode(request.kind, request.payload, request.options))
    return encoded


def _job(body: dict[str, Any], *, where: str) -> JobRequest:
    invalid = "invalid_request"
    _no_unknown_fields(body, JOB_FIELDS, f"a job has {_NAMED}", where=where)
    kind = body.get("kind")
    if kind is None or kind == "":
        raise api_error(400, invalid, f"{where}kind: required")
    if not isinstance(kind, str):
        raise api_error(400, invalid, f"{where}kind: must be a string")
    if "payload" not in body:
        raise api_error(400, invalid, f"{where}payload: required")
    if body["payload"] is None:
        raise api_error(400, invalid, f"{where}payload: must not be null")
    with refusals(where):
        options = options_from_json(body)
    return JobRequest(kind=kind, payload=body["payload"], options=options)


def _no_unknown_fields(
    body: dict[str, Any], known: tuple[str, ...], hint: str, *, where: str
) -> None:
    unknown = sorted(set(body) - set(known))
    if unknown:
        names = ", ".join(repr(name[:64]) for name in unknown[:5])
        raise api_error(400, "invalid_request", f"{where}unknown field {names}; {hint}")


@contextmanager
def refusals(where: str = "") -> Iterator[None]:
    """The core's refusals of a job as 400s: its kind, its payload, its options.

    The messages come from the core's fixed wording and name fields, never a
    submitted value.
    """
    try:
        yield
    except UnknownKindError:
        raise api_error(400, "unknown_kind", f"{where}unknown job kind") from None
    except InvalidPayloadError as error:
        detail = "; ".join(error.problems[:20])
        raise api_error(
            400, "invalid_payload", f"{where}payload does not match the job kind: {detail}"
        ) from None
    except InvalidOptionError as error:
        raise api_error(400, "invalid_option", f"{where}{error.field}: {error.problem}") from None
