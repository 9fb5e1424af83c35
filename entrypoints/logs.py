"""The two log formats of ``serve`` and ``worker``: text for people, JSON lines for tools.

A line about a job carries its ``job_id``, ``kind`` and, for an outcome,
``code`` as record attributes (the runner passes them with ``extra=``): the
text format has them in the message already; the JSON format adds them as
keys. Neither adds anything the message does not hold, so what may be
logged (codes, fixed reasons, type names; never an exception's text, a
token or a password) is decided where the line is written.

A record is one line in either format, whatever a client sent: a value from
a request is logged ``escaped`` where the line is written, and the text
format escapes control characters in every message (waitress's own
included) as JSON does.
"""

from __future__ import annotations

import datetime
import json
import logging

from jobtable.core.text import NOT_PLAIN

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

JOB_KEYS = ("job_id", "kind", "code")
"""The record attributes a line about a job carries, copied as keys when set."""


def escaped(text: str) -> str:
    """``text`` with control characters, line separators and lone surrogates written as
    Python writes them in a string (``\\n``, ``\\x00``, ``\\udcff``): one line that can
    look like no other record, whatever a client sent."""
    return NOT_PLAIN.sub(lambda found: found.group().encode("unicode_escape").decode(), text)


class TextLogFormatter(logging.Formatter):
    """``2030-01-02 03:04:05,678 INFO jobtable: message``: the format jobtable always had.

    The message is ``escaped``; a traceback after it keeps its lines.
    """

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        return escaped(super().formatMessage(record))


class JsonLogFormatter(logging.Formatter):
    """One JSON object a line: time (RFC 3339, UTC), level, logger, message, and the job's keys.

    Newlines in a message or a traceback are escaped by JSON, so a line is
    always one record.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": rfc3339(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in JOB_KEYS:
            value = record.__dict__.get(key)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)


def rfc3339(timestamp: float) -> str:
    """``2030-01-02T03:04:05.678Z``: a record's time in UTC, to the millisecond."""
    moment = datetime.datetime.fromtimestamp(timestamp, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
