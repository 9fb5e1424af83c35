"""The ``Idempotency-Key`` header on enqueues (the IETF httpapi draft, as Stripe does it).

The first request with a key is answered as usual and its answer kept 24 h
(an enqueue's answer in the enqueue's own transaction, so a job never exists
without it);
a repeat of the same parsed request gets that answer again with
``Idempotent-Replayed: true``; the same key on a different request is
refused 422 ``idempotency_key_reused``; a repeat while the first is still
being answered is told 409 ``conflict``. A 5xx answer (the database) is not
kept, so a retry may succeed. The decisions are the core's
(core/idempotency.py); the keys live in the store, shared by every process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import falcon

from jobtable.core import InvalidOptionError, Runner
from jobtable.core.idempotency import InFlight, KeepAnswer, Replay, Reused
from jobtable.core.jobs import Enqueued
from jobtable.entrypoints.http.errors import api_error, envelope

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"


def request_hash(route: str, body: bytes) -> str:
    """The same parsed request, whatever its spacing or key order, hashes the same."""
    canonical = json.dumps(
        json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(f"{route}\n{canonical}".encode()).hexdigest()


def answer_once(
    req: falcon.Request,
    resp: falcon.Response,
    runner: Runner,
    *,
    route: str,
    body: bytes,
    answer: Callable[[str | None], None],
) -> None:
    """Run ``answer`` (which sets ``resp``) unless the request's key says to replay or refuse.

    ``answer`` gets the key (None without one) to keep its answer with the
    jobs it stores (``kept``); a refusal before anything is stored is kept here.
    """
    key = req.get_header(HEADER)
    if key is None:
        answer(None)
        return
    try:
        repeat = runner.begin_idempotent(key, request_hash(route, body))
    except InvalidOptionError as error:  # the key: not 1 to 255 visible ASCII characters
        raise api_error(400, "invalid_option", f"{error.field}: {error.problem}") from None
    if isinstance(repeat, Replay):
        _replay(resp, repeat)
        return
    if isinstance(repeat, InFlight):
        raise api_error(
            409, "conflict", "a request with this Idempotency-Key is still being answered"
        )
    if isinstance(repeat, Reused):
        raise api_error(
            422, "idempotency_key_reused", "this Idempotency-Key was sent with another request"
        )
    try:
        answer(key)
    except falcon.HTTPError as error:
        status = falcon.http_status_to_code(error.status)
        if status >= 500:
            runner.forget_key(key)  # unless the jobs were stored with their answer after all
        else:  # the same request gets the same refusal
            runner.keep_answer(key, status, json.dumps(envelope(status, error)))
        raise
    except BaseException:
        runner.forget_key(key)
        raise


def kept(
    key: str | None, answer: Callable[[Sequence[Enqueued]], tuple[int, Any]]
) -> KeepAnswer | None:
    """What an enqueue keeps for ``key``: ``answer``'s status and JSON body, as served."""
    if key is None:
        return None

    def as_kept(enqueued: Sequence[Enqueued]) -> tuple[int, str]:
        status, media = answer(enqueued)
        return status, _text(media)

    return KeepAnswer(key=key, answer=as_kept)


def _replay(resp: falcon.Response, kept: Replay) -> None:
    resp.status = kept.status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = kept.body
    resp.set_header(REPLAYED, "true")
    body: Any = json.loads(kept.body)
    if isinstance(body, dict) and isinstance(body.get("id"), str):
        resp.location = f"/api/v1/jobs/{body['id']}"


def _text(media: Any) -> str:
    return json.dumps(media, separators=(",", ":"), ensure_ascii=False)
