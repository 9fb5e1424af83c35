"""The JSON log format: one object a line with time, level, logger and message, and the job's
id, kind and code when the line is about a job; nothing a text line would not show."""

from __future__ import annotations

import datetime
import json
import logging
import sys

import pytest

from jobtable.entrypoints.logs import JsonLogFormatter, TextLogFormatter, rfc3339

MOMENT = datetime.datetime(2030, 1, 2, 3, 4, 5, 678_901, tzinfo=datetime.UTC)


def record(message: str, *args, level: int = logging.INFO, exc_info=None, **extra):
    made = logging.LogRecord("jobtable.runner", level, __file__, 1, message, args, exc_info)
    made.created = MOMENT.timestamp()
    made.__dict__.update(extra)
    return made


def test_a_plain_line_has_time_level_logger_and_message_only():
    line = JsonLogFormatter().format(record("listening on http://%s:%d", "127.0.0.1", 8080))
    assert json.loads(line) == {
        "time": "2030-01-02T03:04:05.678Z",
        "level": "info",
        "logger": "jobtable.runner",
        "message": "listening on http://127.0.0.1:8080",
    }


def test_a_line_about_a_job_carries_its_id_kind_and_code():
    line = JsonLogFormatter().format(
        record("job failed job_id=%s", "j1", level=logging.ERROR, job_id="j1", kind="mail",
               code="internal_error")
    )  # fmt: skip
    parsed = json.loads(line)
    assert (parsed["level"], parsed["job_id"], parsed["kind"], parsed["code"]) == (
        "error", "j1", "mail", "internal_error",
    )  # fmt: skip


def test_a_message_with_newlines_and_a_traceback_stays_on_one_line():
    try:
        raise ValueError("first\nsecond")
    except ValueError:
        line = JsonLogFormatter().format(record("two\nlines", exc_info=sys.exc_info()))
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == "two\nlines"
    assert parsed["exception"].startswith("Traceback")


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (MOMENT, "2030-01-02T03:04:05.678Z"),
        (datetime.datetime(2030, 1, 2, 4, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
         "2030-01-02T03:04:05.000Z"),
    ],
)  # fmt: skip
def test_times_are_rfc_3339_in_utc_to_the_millisecond(moment, expected):
    assert rfc3339(moment.timestamp()) == expected


def test_the_text_format_is_as_it_always_was():
    line = TextLogFormatter().format(record("job failed job_id=%s", "j1", job_id="j1"))
    assert line.endswith(" INFO jobtable.runner: job failed job_id=j1")


def test_a_text_line_is_one_line_whatever_its_message_holds_and_its_traceback_keeps_its_own():
    forged = "/a\n2030-01-02 03:04:05,678 ERROR jobtable: forged\x00\udcff\u2028\x85"
    try:
        raise ValueError("boom")
    except ValueError:
        line = TextLogFormatter().format(record("request failed path=%s", forged,
                                                exc_info=sys.exc_info()))  # fmt: skip
    first, *traceback = line.split("\n")
    assert first.endswith(
        r" INFO jobtable.runner: request failed path=/a\n2030-01-02 03:04:05,678 ERROR "
        r"jobtable: forged\x00\udcff\u2028\x85"
    )
    assert traceback[0] == "Traceback (most recent call last):"
