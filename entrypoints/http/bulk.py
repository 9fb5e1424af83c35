"""POST /api/v1/jobs/cancel and /api/v1/jobs/retry: an operator's action on every job a filter
matches (core/bulk.py). The body is ``{"filter": {...}, "dry_run": bool}``; the answer
``{"matched": n, "changed": n}``."""

from __future__ import annotations

from typing import Any

import falcon

from jobtable.core import Runner
from jobtable.core.bulk import BulkAction, BulkFilter, bulk_filter
from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.entrypoints.http.body import parse_json_object, read_body
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.times import parse_rfc3339

BODY_SHAPE = 'a JSON object {"filter": {...}, "dry_run": false}'


def read_bulk_request(fields: Any) -> tuple[BulkFilter, bool]:
    """The filter and the dry-run flag of a request body; 400 for anything else."""
    unknown = sorted(set(fields) - {"filter", "dry_run"})
    if unknown:
        raise api_error(400, "invalid_option", f"{unknown[0]}: not a field; use filter, dry_run")
    which = fields.get("filter")
    if not isinstance(which, dict):
        raise api_error(400, "invalid_option", "filter: must be an object, {} for every job")
    dry_run = fields.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise api_error(400, "invalid_option", "dry_run: must be true or false")
    try:
        return bulk_filter(which, parse_rfc3339), dry_run
    except InvalidOptionError as error:
        raise api_error(400, "invalid_option", str(error)) from None


class BulkResource:
    """Cancel or retry the jobs a filter matches, up to the newest job when the request began,
    in batches of 500; logged. A state the action cannot change is a 400."""

    def __init__(self, runner: Runner, action: BulkAction) -> None:
        self._runner = runner
        self._action = action

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = parse_json_object(read_body(req), shape=BODY_SHAPE)
        which, dry_run = read_bulk_request(body)
        try:
            done = self._runner.bulk(self._action, which, dry_run=dry_run, by="http")
        except InvalidOptionError as error:
            raise api_error(400, "invalid_option", str(error)) from None
        resp.media = {"matched": done.matched, "changed": done.changed}
