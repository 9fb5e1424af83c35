"""``jobtable list`` and ``jobtable prune``: what is there, and letting old jobs go.

``list`` shows what ``GET /api/v1/jobs`` lists, with the same filters: an
aligned table on a terminal, the five-key JSON of each job a line when piped.
``prune`` runs retention once, now, as a runner does every minute.
"""

from __future__ import annotations

import argparse
import json
import sys

from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.entrypoints import config, listing, views
from jobtable.entrypoints.commands import one_off
from jobtable.entrypoints.config import SETTINGS, ConfigError

_SETTING_OF_FIELD = {"queue": "list_queue"}
"""The list's settings by the core's field names, where they differ."""

JOB_COLUMNS: list[listing.Column] = [
    ("ID", lambda item: item["id"]),
    ("KIND", lambda item: item["kind"]),
    ("STATUS", lambda item: item["status"]),
    ("STATE", lambda item: item["state"]),
    ("ERROR", lambda item: item["error"]),
    ("RESULT", lambda item: _short(item["result"])),
]


def _short(result: object) -> str | None:
    if result is None:
        return None
    text = json.dumps(result)
    return text if len(text) <= 60 else text[:57] + "..."


def run_list(args: argparse.Namespace) -> int:
    limit = config.parse_positive_int("limit", args.limit)
    with one_off(args) as runner:
        try:
            page = runner.list_jobs(
                status=args.status,
                kind=args.kind,
                queue=args.list_queue,
                limit=limit,
                after=args.after,
                state=args.state,
            )
        except InvalidOptionError as error:
            setting = SETTINGS[_SETTING_OF_FIELD.get(error.field, error.field)]
            raise ConfigError(f"{setting.flag}: {error.problem} (or set {setting.env})") from None
    listing.write([views.listed(job) for job in page.jobs], JOB_COLUMNS)
    if page.next_after is not None:
        print(f"jobtable: more jobs: add --after {page.next_after}", file=sys.stderr)
    return 0


def run_prune(args: argparse.Namespace) -> int:
    retention = config.parse_retention(args.keep_succeeded, args.keep_failed)
    with one_off(args) as runner:
        pruned = runner.prune(retention)
    if pruned is None:
        print(
            "jobtable: another runner is pruning now; nothing was deleted here "
            "(it deletes what this would have)",
            file=sys.stderr,
        )
        return 0
    print(f"pruned {pruned} finished jobs")
    return 0
