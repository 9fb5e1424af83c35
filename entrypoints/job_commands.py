"""``jobtable enqueue``, ``get`` and ``cancel``: one job, by kind or by id.

Each opens the store, makes an insert-only runner (it claims nothing), does
one thing and exits; a job is printed as the JSON the HTTP API serves.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Any

from jobtable.core import InvalidPayloadError, Runner, UnknownKindError
from jobtable.core.bulk import BulkAction, bulk_filter
from jobtable.core.enqueue_options import EnqueueOptions, InvalidOptionError
from jobtable.core.ids import could_exist
from jobtable.core.jobs import CancelOutcome, RetryOutcome
from jobtable.entrypoints import config, views
from jobtable.entrypoints.commands import CommandError, one_off, one_off_runner, open_for
from jobtable.entrypoints.config import SETTINGS, ConfigError
from jobtable.entrypoints.follow import show_changes
from jobtable.entrypoints.http.operations import shown as payload_of
from jobtable.entrypoints.times import TimeFormatError, parse_duration, parse_rfc3339
from jobtable.entrypoints.wiring import Store, follow_changes, redact

EXIT_JOB_FAILED = 1
EXIT_USAGE = 2
"""A setting or an input to fix, as every refusal of the CLI's."""
EXIT_INTERRUPTED = 130

_SETTING_OF_FIELD = {
    "run_at": "at",
    "delay": "in",
    "queue": "queue",
    "priority": "priority",
    "timeout": "timeout",
    "unique_key": "unique_key",
}


def run_get(args: argparse.Namespace) -> int:
    detail = config.parse_flag("detail", args.detail)
    following = config.parse_flag("follow", args.follow)
    if detail and following:
        raise ConfigError("--detail and --follow do not go together; give one of them")
    store = open_for(args, must_exist=True)
    try:
        if following:
            runner = one_off_runner(args, store)
            if runner.get(args.id) is None:
                raise _no_such_job(args)
            return _wait_for(store, runner, args.id)
        if detail:
            runner = one_off_runner(args, store)
            found = runner.detail(args.id)
            shown = (
                None if found is None else views.job_detail(found, payload_of(runner, found, False))
            )
        else:
            job = store.get(args.id) if could_exist(args.id) else None
            shown = None if job is None else job.to_public()
    finally:
        store.close()
    if shown is None:
        raise _no_such_job(args)
    print(json.dumps(shown))
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    if args.id is None or _bulk_asked(args):
        return run_bulk(args, BulkAction.CANCEL)
    with one_off(args) as runner:
        cancelled = runner.cancel(args.id)
    if cancelled is None:
        raise _no_such_job(args)
    outcome, job = cancelled
    if outcome is CancelOutcome.REFUSED:
        refusal = views.cancel_refusal(job.status.value, job.error)
        raise CommandError(f"cannot cancel job {job.id}: {refusal}")
    print(json.dumps(job.to_public()))
    if outcome is CancelOutcome.REQUESTED:
        print(
            f"jobtable: job {job.id} is running; its handler was told to stop "
            f"(jobtable get {job.id} shows when it has)",
            file=sys.stderr,
        )
    return 0


def run_retry(args: argparse.Namespace) -> int:
    if args.id is None or _bulk_asked(args):
        return run_bulk(args, BulkAction.RETRY)
    with one_off(args) as runner:
        retried = runner.retry(args.id)
    if retried is None:
        raise _no_such_job(args)
    outcome, job = retried
    if outcome is RetryOutcome.REFUSED:
        refusal = views.retry_refusal(job.status.value)
        raise CommandError(f"cannot retry job {job.id}: {refusal}")
    if outcome is RetryOutcome.KEY_HELD:
        raise CommandError(f"cannot retry job {job.id}: {views.KEY_HELD_REFUSAL}")
    print(json.dumps(job.to_public()))
    return 0


_FILTER_FLAGS = {
    "state": "--state",
    "kind": "--kind",
    "queue": "--queue",
    "created_after": "--created-after",
    "created_before": "--created-before",
}


def _bulk_fields(args: argparse.Namespace) -> dict[str, str]:
    """The filter flags given, by field name."""
    return {
        name: value
        for name in _FILTER_FLAGS
        if (value := getattr(args, f"bulk_{name}")) is not None
    }


def _bulk_asked(args: argparse.Namespace) -> bool:
    """Any flag of a bulk action: a filter, --all or --dry-run."""
    return bool(_bulk_fields(args)) or args.bulk_all or args.bulk_dry_run


def run_bulk(args: argparse.Namespace, action: BulkAction) -> int:
    """``cancel``/``retry`` with a filter instead of an ID: prints ``{"matched", "changed"}``.

    Every refusal is one line, exit 2, before anything is read or changed."""
    fields = _bulk_fields(args)
    verb = action.value
    flags = ", ".join(_FILTER_FLAGS.values())
    if args.id is not None:
        raise CommandError(
            f"give a job's ID or a filter ({flags}, --all, --dry-run), not both", EXIT_USAGE
        )
    if not fields and not args.bulk_all:
        raise CommandError(
            f"give the ID of the job to {verb}, or a filter ({flags}; --all for every job "
            f"{verb} applies to), with --dry-run to count them first",
            EXIT_USAGE,
        )
    try:
        which = bulk_filter(fields, parse_rfc3339)
        with one_off(args) as runner:
            done = runner.bulk(action, which, dry_run=args.bulk_dry_run, by="cli")
    except InvalidOptionError as error:
        flag = _FILTER_FLAGS.get(error.field.removeprefix("filter."), error.field)
        raise CommandError(f"{flag}: {error.problem}", EXIT_USAGE) from None
    print(json.dumps({"matched": done.matched, "changed": done.changed}))
    if args.bulk_dry_run:
        print(
            f"jobtable: dry run: {done.matched} {'job matches' if done.matched == 1 else 'jobs match'}"
            f"; none changed (without --dry-run, {verb} them)",
            file=sys.stderr,
        )
    return 0


def _no_such_job(args: argparse.Namespace) -> CommandError:
    return CommandError(
        f"no job {args.id!r} in {redact(args.database)}; check the id and --database"
    )


def _parse_payload(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        where = f" at column {error.colno}" if isinstance(error, json.JSONDecodeError) else ""
        raise CommandError(
            f"PAYLOAD_JSON is not valid JSON{where}; give an object, e.g. '{{\"seconds\": 3}}'",
            exit_code=2,
        ) from None


def run_enqueue(args: argparse.Namespace) -> int:
    payload = _parse_payload(args.payload)
    options = options_from_args(args)
    store = open_for(args, must_exist=True)
    try:
        runner = one_off_runner(args, store)
        try:
            job_id = runner.enqueue(args.kind, payload, options)
        except UnknownKindError:
            known = ", ".join(runner.kinds.names())
            raise CommandError(
                f"unknown job kind {args.kind!r}; known kinds: {known} "
                "(load yours with --kinds module)",
                exit_code=2,
            ) from None
        except InvalidPayloadError as error:
            raise CommandError(
                f"payload does not match kind {args.kind!r}: {'; '.join(error.problems[:10])}",
                exit_code=2,
            ) from None
        if job_id.duplicate:
            print(
                f"jobtable: duplicate of an existing job: {job_id} already holds that unique "
                "key, so nothing was enqueued",
                file=sys.stderr,
            )
        if not args.wait:
            print(job_id)
            return 0
        return _wait_for(store, runner, job_id)
    finally:
        store.close()


def options_from_args(args: argparse.Namespace) -> EnqueueOptions:
    """``--at``, ``--in``, ``--queue``, ``--priority``, ``--unique-key`` and ``--timeout``
    (or their variables) as the core's options; a ConfigError naming the flag otherwise."""
    given = {name: _given(args, name) for name in _SETTING_OF_FIELD.values()}
    if given["at"] is not None and given["in"] is not None:
        raise ConfigError("give --at or --in, not both (check JOBTABLE_AT and JOBTABLE_IN too)")
    try:
        return EnqueueOptions(
            run_at=_read("at", given["at"], parse_rfc3339),
            delay=_read("in", given["in"], parse_duration),
            queue=given["queue"],
            priority=_read("priority", given["priority"], _whole_number),
            timeout=_read("timeout", given["timeout"], parse_duration),
            unique_key=given["unique_key"],
        ).check(now=datetime.datetime.now(datetime.UTC))
    except InvalidOptionError as error:
        setting = SETTINGS[_SETTING_OF_FIELD[error.field]]
        raise ConfigError(f"{setting.flag}: {error.problem} (or set {setting.env})") from None


def _given(args: argparse.Namespace, name: str) -> str | None:
    """The flag's value, or its variable's; empty counts as not given."""
    value = getattr(args, name, None)
    return value if value is not None and value.strip() else None


def _read(name: str, text: str | None, parse: Any) -> Any:
    if text is None:
        return None
    try:
        return parse(text)
    except TimeFormatError as error:
        setting = SETTINGS[name]
        raise ConfigError(f"{setting.flag} {text!r} {error} (or set {setting.env})") from None


def _whole_number(text: str) -> int | str:
    """An integer, or the text as it was, for the core to refuse in its own words."""
    try:
        return int(text.strip())
    except ValueError:
        return text


def _wait_for(store: Store, runner: Runner, job_id: str) -> int:
    """Print the job's changes as they happen (``follow``); exit as the job ended."""
    watcher = follow_changes(store, runner.changes)
    try:
        job = show_changes(runner.follow(job_id))
    except KeyboardInterrupt:
        raise CommandError(
            f"stopped waiting; the job goes on: jobtable get {job_id}",
            exit_code=EXIT_INTERRUPTED,
        ) from None
    except LookupError:
        raise CommandError(f"job {job_id} is gone (pruned or deleted)") from None
    finally:
        watcher.stop()
    if job.error is not None:
        print(f"jobtable: job {job_id} failed: {job.error}", file=sys.stderr)
        return EXIT_JOB_FAILED
    return 0
