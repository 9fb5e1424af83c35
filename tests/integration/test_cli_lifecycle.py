"""The CLI's lifecycle commands on both engines: enqueue options, get --detail, cancel, queues,
pause, resume and runners.

Where a command needs a runner elsewhere (a running job to cancel, a live
runner to list), a runner in this process stands in for the other process:
it has its own store, so it sees the CLI's writes only through the database.
"""

from __future__ import annotations

import datetime
import io
import json
import zoneinfo
from collections.abc import Iterator

import attrs
import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext, Runner
from jobtable.entrypoints import listing
from jobtable.entrypoints.cli import main
from jobtable.entrypoints.config import SETTINGS
from jobtable.entrypoints.queue_commands import QUEUE_COLUMNS, RUNNER_COLUMNS
from jobtable.entrypoints.wiring import open_store
from tests.support.databases import database_for
from tests.support.observed import ObservedStore
from tests.support.states import states

DETAIL_KEYS = {
    "id", "kind", "status", "result", "error", "queue", "priority", "run_at", "attempt",
    "max_attempts", "snoozes", "created_at", "started_at", "finished_at", "timeout", "attempts",
    "waiting", "state", "payload", "waited",
}  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in [setting.env for setting in SETTINGS.values()] + ["JOBTABLE_API_TOKEN"]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> Iterator[str]:
    with database_for(request.param, tmp_path) as named:
        assert main(["migrate", "--database", named, "--log-level", "warning"]) == 0
        yield named


@attrs.frozen
class Nothing:
    pass


@attrs.frozen
class Done:
    def public(self):
        return {"done": True}


def wait_until_told(ctx: JobContext, payload: Nothing) -> Done:
    while not ctx.wait(30):
        pass
    raise RuntimeError("stopped")


def register(kinds):
    """What ``--kinds tests.integration.test_cli_lifecycle`` loads: a kind of queue slow, and
    a schedule of it that ticks once a year."""
    waits = kinds.register("wait", wait_until_told, payload=Nothing, queue="slow")
    kinds.cron("0 0 1 1 *", waits, Nothing(), name="new-year", timezone="Asia/Tokyo")


KINDS = "tests.integration.test_cli_lifecycle"


class Elsewhere:
    """A runner with its own store on the same database: another process, as far as the CLI knows."""

    def __init__(self, database: str) -> None:
        self.store = ObservedStore(
            open_store(database, synchronous="normal", now=SystemClock().now())
        )
        self.runner = Runner(self.store, SystemClock(), workers=1, queues=["slow"])
        register(self.runner.kinds)
        self.watcher = self.store.watch(self.runner.notice_jobs_from_elsewhere)
        self.runner.start()

    def wait_for(self, job_id: str, status: str) -> None:
        self.store.wait_until(lambda: self.store.get(job_id).status.value == status, within=20)

    def close(self) -> None:
        self.runner.stop_now()
        assert self.runner.join(timeout=10)
        self.watcher.stop()
        self.store.close()


@pytest.fixture
def elsewhere(database) -> Iterator[Elsewhere]:
    started = Elsewhere(database)
    yield started
    started.close()


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main([*argv, "--log-level", "warning"])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def enqueue(capsys, database, *options: str, kind: str = "noop") -> str:
    code, out, err = cli(
        capsys, "enqueue", kind, *options, "--kinds", KINDS, "--database", database
    )
    assert code == 0, err
    return out.strip()


def detail(capsys, database, job_id: str) -> dict:
    code, out, err = cli(capsys, "get", job_id, "--detail", "--database", database)
    assert code == 0, err
    return json.loads(out)


# -- enqueue ------------------------------------------------------------------


def test_enqueue_options_are_stored_with_the_job(capsys, database):
    job_id = enqueue(capsys, database, "--queue", "mail", "--priority", "2", "--timeout", "5m",
                     "--at", "2030-01-02T03:04:05+01:00", "--unique-key", "welcome:7")  # fmt: skip
    shown = detail(capsys, database, job_id)
    assert set(shown) == DETAIL_KEYS
    assert (shown["queue"], shown["priority"], shown["timeout"]) == ("mail", 2, 300.0)
    assert shown["run_at"] == "2030-01-02T02:04:05+00:00"
    assert shown["waiting"][0] == "due at 2030-01-02T02:04:05+00:00"


@pytest.mark.parametrize(("given", "seconds"), [("90", 90), ("30s", 30), ("5m", 300),
                                                ("2h", 7200), ("1d", 86400), ("1.5m", 90)])  # fmt: skip
def test_enqueue_in_takes_a_duration(capsys, database, given, seconds):
    shown = detail(capsys, database, enqueue(capsys, database, "--in", given))
    created = datetime.datetime.fromisoformat(shown["created_at"])
    assert datetime.datetime.fromisoformat(shown["run_at"]) - created == datetime.timedelta(
        seconds=seconds
    )


def test_every_enqueue_option_is_also_an_environment_variable(capsys, database, monkeypatch):
    for name, value in {"JOBTABLE_QUEUE": "reports", "JOBTABLE_PRIORITY": "7",
                        "JOBTABLE_IN": "1h", "JOBTABLE_TIMEOUT": "30",
                        "JOBTABLE_UNIQUE_KEY": "from-env"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    job_id = enqueue(capsys, database)
    shown = detail(capsys, database, job_id)
    assert (shown["queue"], shown["priority"], shown["timeout"]) == ("reports", 7, 30.0)
    assert shown["run_at"] > shown["created_at"]
    assert enqueue(capsys, database) == job_id  # the same unique key: a duplicate
    monkeypatch.setenv("JOBTABLE_AT", "2030-01-01T00:00:00Z")
    monkeypatch.delenv("JOBTABLE_IN")
    monkeypatch.delenv("JOBTABLE_UNIQUE_KEY")
    assert detail(capsys, database, enqueue(capsys, database))["run_at"] == (
        "2030-01-01T00:00:00+00:00"
    )


def test_a_unique_key_duplicate_prints_the_existing_id_and_says_so(capsys, database):
    first = enqueue(capsys, database, "--unique-key", "nightly")
    code, out, err = cli(
        capsys, "enqueue", "noop", "--unique-key", "nightly", "--database", database
    )
    assert code == 0
    assert out.strip() == first
    assert "duplicate of an existing job" in err
    code, out, err = cli(capsys, "enqueue", "noop", "--database", database)
    assert out.strip() != first
    assert "duplicate" not in err


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--at", "2030-01-02T03:04:05"], "--at '2030-01-02T03:04:05' has no offset; say which "
                                          "zone, e.g. 2030-01-02T03:04:05Z"),
        (["--at", "next week"], "--at 'next week' must be an RFC 3339 time with an offset"),
        (["--at", "2200-01-01T00:00:00Z"], "--at: must be at most a century from now "
                                           "(or set JOBTABLE_AT)"),
        (["--in", "5 minutes"], "--in '5 minutes' must be a duration: 30s, 5m, 2h, 1d or plain "
                                "seconds (or set JOBTABLE_IN)"),
        (["--in", "-5"], "--in '-5' must be a duration"),
        (["--in", "999999999999"], "--in: must be a number of seconds >= 0 and at most 3153600000 (a century)"),
        (["--at", "2030-01-02T03:04:05Z", "--in", "5m"], "give --at or --in, not both"),
        (["--priority", "10"], "--priority: must be a whole number from 0 (first) to 9 (last) "
                               "(or set JOBTABLE_PRIORITY)"),
        (["--priority", "high"], "--priority: must be a whole number from 0"),
        (["--queue", "a b"], "--queue: must be 1-64 letters, digits"),
        (["--timeout", "0"], "--timeout: must be a number of seconds > 0 and at most 3153600000 "
                             "(a century) (or set JOBTABLE_TIMEOUT)"),
        (["--unique-key", "k" * 256], "--unique-key: must be a string of 1 to 255 characters"),
        # A non-UTF-8 byte in argv arrives as a lone surrogate; no store could keep it.
        (["--unique-key", "report-\udcff"], "--unique-key: must be a string of 1 to 255 "
                                            "characters, none of them a control character"),
        (["--unique-key", "a\nb"], "--unique-key: must be a string of 1 to 255 characters"),
    ],
)  # fmt: skip
def test_a_bad_enqueue_option_exits_2_with_one_line_and_stores_nothing(
    capsys, database, options, expected
):
    code, out, err = cli(capsys, "enqueue", "noop", *options, "--database", database)
    assert code == 2
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("jobtable: " + expected), line
    assert cli(capsys, "queues", "--database", database)[1] == ""  # no queue holds a job


# -- get --detail ---------------------------------------------------------------


def test_get_detail_prints_what_the_api_serves_and_get_keeps_five_keys(capsys, database):
    job_id = enqueue(capsys, database, "--queue", "mail")
    shown = detail(capsys, database, job_id)
    assert shown["waiting"] == ["no live runner serves kind noop"]
    assert (shown["attempt"], shown["attempts"], shown["started_at"]) == (0, [], None)
    _code, out, _ = cli(capsys, "get", job_id, "--database", database)
    plain = json.loads(out)
    assert plain == {key: shown[key] for key in ("id", "kind", "status", "result", "error")}


def test_get_detail_is_also_an_environment_variable(capsys, database, monkeypatch):
    job_id = enqueue(capsys, database)
    monkeypatch.setenv("JOBTABLE_DETAIL", "1")
    code, out, _ = cli(capsys, "get", job_id, "--database", database)
    assert set(json.loads(out)) == DETAIL_KEYS
    monkeypatch.setenv("JOBTABLE_DETAIL", "maybe")
    code, out, err = cli(capsys, "get", job_id, "--database", database)
    assert code == 2
    assert "JOBTABLE_DETAIL 'maybe' must be true or false" in err


def test_get_detail_of_an_unknown_job_exits_1(capsys, database):
    code, out, err = cli(capsys, "get", "01900000-0000-7000-8000-00000000dead", "--detail",
                         "--database", database)  # fmt: skip
    assert (code, out) == (1, "")
    assert "no job '01900000-0000-7000-8000-00000000dead'" in err


@pytest.mark.parametrize("job_id", ["\udcff", "a\nb", "tab\tbed", "k" * 256])
@pytest.mark.parametrize(
    "command", [["get"], ["get", "--detail"], ["get", "--follow"], ["cancel"], ["retry"]]
)
def test_an_id_no_job_could_have_is_not_found_on_one_escaped_line(
    capsys, database, command, job_id
):
    code, out, err = cli(capsys, *command, job_id, "--database", database)
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith(f"jobtable: no job {job_id!r} in ")


# -- cancel -------------------------------------------------------------------


def test_cancel_fails_a_queued_job_at_once_and_again_changes_nothing(capsys, database):
    job_id = enqueue(capsys, database)
    for _ in range(2):
        code, out, err = cli(capsys, "cancel", job_id, "--database", database)
        assert (code, err) == (0, "")
        assert json.loads(out) == {
            "id": job_id, "kind": "noop", "status": "failed", "result": None, "error": "cancelled",
        }  # fmt: skip


def test_cancel_tells_a_running_job_in_another_process_to_stop(capsys, database, elsewhere):
    job_id = elsewhere.runner.enqueue("wait", {}, None)
    elsewhere.wait_for(job_id, "running")
    code, out, err = cli(capsys, "cancel", job_id, "--database", database)
    assert code == 0
    assert json.loads(out)["status"] == "running"
    assert f"job {job_id} is running; its handler was told to stop" in err
    elsewhere.wait_for(job_id, "failed")
    assert elsewhere.store.get(job_id).error == "cancelled"


def test_cancel_of_a_finished_job_or_an_unknown_one_exits_1(capsys, database):
    job_id = enqueue(capsys, database)
    store = open_store(database, synchronous="normal", now=SystemClock().now())
    try:
        runner = Runner(store, SystemClock(), workers=1)
        assert [job.id for job in runner.drain()] == [job_id]
    finally:
        store.close()
    code, out, err = cli(capsys, "cancel", job_id, "--database", database)
    assert (code, out) == (1, "")
    assert err == (
        f"jobtable: cannot cancel job {job_id}: the job already succeeded; only a queued or "
        "running job can be cancelled\n"
    )
    code, _, err = cli(capsys, "cancel", "01900000-0000-7000-8000-00000000dead", "--database",
                       database)  # fmt: skip
    assert code == 1
    assert "no job '01900000-0000-7000-8000-00000000dead'" in err


# -- queues, pause, resume ------------------------------------------------------


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_queues_pause_and_resume(capsys, database):
    enqueue(capsys, database, "--queue", "mail")
    enqueue(capsys, database, "--queue", "mail", "--in", "1h")
    code, out, _ = cli(capsys, "pause", "mail", "--database", database)
    assert code == 0
    assert json.loads(out) == {
        "name": "mail", "paused": True,
        "counts": {"queued": 2, "running": 0, "succeeded": 0, "failed": 0},
        "states": states(available=1, scheduled=1),
        "limit": None, "rate": None, "running": 0, "held_back": 0,
    }  # fmt: skip
    code, out, _ = cli(capsys, "pause", "billing", "--database", database)  # holds no job yet
    assert json.loads(out)["paused"] is True
    code, out, _ = cli(capsys, "queues", "--database", database)
    assert [(queue["name"], queue["paused"]) for queue in json_lines(out)] == [
        ("billing", True), ("mail", True),
    ]  # fmt: skip
    code, out, _ = cli(capsys, "resume", "mail", "--database", database)
    assert json.loads(out)["paused"] is False
    code, out, _ = cli(capsys, "queues", "--database", database)
    assert [(queue["name"], queue["paused"]) for queue in json_lines(out)] == [
        ("billing", True), ("mail", False),
    ]  # fmt: skip


@pytest.mark.parametrize("command", ["pause", "resume"])
def test_pausing_a_name_no_queue_can_have_exits_2(capsys, database, command):
    code, out, err = cli(capsys, command, "no spaces", "--database", database)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("jobtable: QUEUE 'no spaces': must be 1-64 letters")


def test_a_paused_queue_holds_its_jobs_in_another_process_until_resumed(
    capsys, database, elsewhere
):
    cli(capsys, "pause", "slow", "--database", database)
    job_id = enqueue(capsys, database, kind="wait")
    assert "queue slow is paused" in detail(capsys, database, job_id)["waiting"]
    cli(capsys, "resume", "slow", "--database", database)
    elsewhere.wait_for(job_id, "running")


# -- queue-limit ----------------------------------------------------------------


def limit(capsys, database, *flags: str) -> dict:
    code, out, err = cli(capsys, "queue-limit", "mail", *flags, "--database", database)
    assert code == 0, err
    return json.loads(out)


def test_queue_limit_sets_keeps_what_is_left_out_and_none_removes(capsys, database):
    both = limit(capsys, database, "--running", "2", "--rate", "10/60")
    assert (both["limit"], both["rate"]) == (2, {"n": 10, "per": 60.0})
    only_rate = limit(capsys, database, "--rate", "5/1.5")
    assert (only_rate["limit"], only_rate["rate"]) == (2, {"n": 5, "per": 1.5})
    _code, out, _ = cli(capsys, "queues", "--database", database)
    assert [(q["name"], q["limit"], q["held_back"]) for q in json_lines(out)] == [("mail", 2, 0)]
    assert limit(capsys, database, "--running", "none")["limit"] is None
    assert limit(capsys, database, "--rate", "None")["rate"] is None
    _code, out, _ = cli(capsys, "queues", "--database", database)
    assert out == ""  # neither limited nor paused, and no job: forgotten


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--running", "0"], "--running '0': must be a whole number from 1 to 2147483647"),
        (["--running", "2147483648"], "--running '2147483648': must be a whole number from 1"),
        (["--running", "two"], "--running 'two': must be a whole number from 1 to 2147483647, or"),
        (["--rate", "10"], "--rate '10': must be N/SECONDS (e.g. 10/60"),
        (["--rate", "0/60"], "--rate '0/60': n must be a whole number from 1 to 2147483647"),
        (["--rate", "9223372036854775808/60"], "--rate '9223372036854775808/60': n must be"),
        (["--rate", "5/0"], "--rate '5/0': per must be seconds above 0"),
        (["--rate", "5/nan"], "--rate '5/nan': per must be seconds above 0"),
        ([], "queue-limit: give --running N, --rate N/SECONDS, or both"),
    ],
)
def test_a_bad_queue_limit_exits_2_with_one_line_and_changes_nothing(capsys, database, flags, said):
    limit(capsys, database, "--running", "3")
    code, out, err = cli(capsys, "queue-limit", "mail", *flags, "--database", database)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"jobtable: {said}"), line
    _code, out, _ = cli(capsys, "queues", "--database", database)
    assert [(q["limit"], q["rate"]) for q in json_lines(out)] == [(3, None)]


def test_a_queue_limit_holds_jobs_in_a_runner_started_before_it(capsys, database, elsewhere):
    code, _, err = cli(capsys, "queue-limit", "slow", "--running", "1", "--database", database)
    assert code == 0, err
    first, second = enqueue(capsys, database, kind="wait"), enqueue(capsys, database, kind="wait")
    elsewhere.wait_for(first, "running")
    assert detail(capsys, database, second)["waiting"] == [
        "held back by its queue's limit: 1 of 1 running"
    ]
    _code, out, _ = cli(capsys, "queues", "--database", database)
    (slow,) = json_lines(out)
    assert (slow["running"], slow["held_back"]) == (1, 1)


# -- runners --------------------------------------------------------------------


def test_runners_lists_the_live_runners_as_json_lines_when_piped(capsys, database, elsewhere):
    _code, out, _ = cli(capsys, "runners", "--database", database)
    (listed,) = json_lines(out)
    assert listed["id"] == elsewhere.runner.id
    assert (listed["kinds"], listed["queues"], listed["workers"]) == (["noop", "wait"], ["slow"], 1)


def test_schedules_lists_what_the_runners_run_as_json_lines_when_piped(capsys, database, elsewhere):
    _code, out, _ = cli(capsys, "schedules", "--database", database)
    (listed,) = json_lines(out)
    next_run = listed.pop("next_run")
    assert listed == {
        "name": "new-year",
        "kind": "wait",
        "expression": "0 0 1 1 *",
        "timezone": "Asia/Tokyo",
        "queue": "slow",
        "queue_paused": False,
        "last_tick": None,
    }
    tokyo = datetime.datetime.fromisoformat(next_run).astimezone(zoneinfo.ZoneInfo("Asia/Tokyo"))
    assert (tokyo.month, tokyo.day, tokyo.hour, tokyo.minute) == (1, 1, 0, 0)


def test_lists_are_tables_on_a_terminal():
    out = io.StringIO()
    queues = [{"name": "mail", "paused": True,
               "counts": {"queued": 12, "running": 1, "succeeded": 340, "failed": 2},
               "limit": 1, "rate": {"n": 10, "per": 60.0}, "running": 1, "held_back": 12},
              {"name": "reports", "paused": False,
               "counts": {"queued": 0, "running": 0, "succeeded": 5, "failed": 0},
               "limit": None, "rate": None, "running": 0, "held_back": 0}]  # fmt: skip
    listing.write(queues, QUEUE_COLUMNS, out=out, table=True)
    assert out.getvalue().splitlines() == [
        "QUEUE    PAUSED  QUEUED  RUNNING  SUCCEEDED  FAILED  LIMIT  RATE    HELD BACK",
        "mail     yes     12      1        340        2       1      10/60s  12",
        "reports  no      0       0        5          0       -      -       0",
    ]
    out = io.StringIO()
    runner = {"id": "r1", "host": "web-1", "pid": 42, "started_at": "2030-01-01T00:00:00+00:00",
              "kinds": ["a", "b"], "queues": None, "workers": 4, "busy": 1,
              "last_seen": "2030-01-01T00:01:00+00:00"}  # fmt: skip
    listing.write([runner], RUNNER_COLUMNS, out=out, table=True)
    header, row = out.getvalue().splitlines()
    assert header.split() == ["RUNNER", "HOST", "PID", "STARTED", "KINDS", "QUEUES", "WORKERS",
                              "BUSY", "LAST", "SEEN"]  # fmt: skip
    assert row.split() == ["r1", "web-1", "42", "2030-01-01T00:00:00+00:00", "a,b", "all", "4",
                           "1", "2030-01-01T00:01:00+00:00"]  # fmt: skip


def test_a_list_is_a_table_when_stdout_is_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal, pipe = Terminal(), io.StringIO()
    items = [{"name": "mail", "paused": False, "counts": {}, "limit": None, "rate": None,
              "held_back": 0}]  # fmt: skip
    listing.write(items, QUEUE_COLUMNS, out=terminal)
    listing.write(items, QUEUE_COLUMNS, out=pipe)
    assert terminal.getvalue().startswith("QUEUE")
    assert json_lines(pipe.getvalue()) == items


def test_list_filters_by_state_and_shows_each_jobs_state(capsys, database):
    later = enqueue(capsys, database, "--in", "3600")
    now = enqueue(capsys, database)
    _code, out, _ = cli(capsys, "list", "--state", "scheduled", "--database", database)
    assert [(job["id"], job["state"]) for job in json_lines(out)] == [(later, "scheduled")]
    _code, out, _ = cli(capsys, "list", "--database", database)
    assert [job["state"] for job in json_lines(out)] == ["available", "scheduled"]
    assert [job["id"] for job in json_lines(out)] == [now, later]
    code, _, err = cli(capsys, "list", "--state", "waiting", "--database", database)
    assert code == 2 and err.startswith("jobtable: --state: must be one of scheduled, available")


# -- bulk cancel and retry ----------------------------------------------------


def test_cancel_and_retry_by_filter_count_first_then_act(capsys, database):
    held = [enqueue(capsys, database, "--queue", "held", "--in", "1h") for _ in range(3)]
    other = enqueue(capsys, database, "--queue", "other", "--in", "1h")
    filtered = ["--state", "scheduled", "--queue", "held", "--database", database]
    code, out, err = cli(capsys, "cancel", *filtered, "--dry-run")
    assert (code, json.loads(out)) == (0, {"matched": 3, "changed": 0})
    assert err == "jobtable: dry run: 3 jobs match; none changed (without --dry-run, cancel them)\n"
    assert {detail(capsys, database, job_id)["state"] for job_id in held} == {"scheduled"}
    code, out, err = cli(capsys, "cancel", *filtered)
    assert (code, json.loads(out), err) == (0, {"matched": 3, "changed": 3}, "")
    assert {detail(capsys, database, job_id)["state"] for job_id in held} == {"cancelled"}
    assert detail(capsys, database, other)["state"] == "scheduled"
    code, out, err = cli(capsys, "retry", "--state", "cancelled", "--database", database)
    assert (code, json.loads(out)) == (0, {"matched": 3, "changed": 3})
    assert {detail(capsys, database, job_id)["state"] for job_id in held} == {"available"}
    code, out, err = cli(capsys, "cancel", "--all", "--database", database)
    assert (code, json.loads(out)) == (0, {"matched": 4, "changed": 4})


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cancel"], "jobtable: give the ID of the job to cancel, or a filter (--state, --kind"),
        (["retry", "--state", "running"], "jobtable: --state: retry applies to jobs failed"),
        (["cancel", "--state", "later"], "jobtable: --state: must be one of scheduled"),
        (["cancel", "--created-after", "monday"], "jobtable: --created-after: must be an RFC"),
        (["cancel", "--queue", "a b"], "jobtable: --queue: must be 1-64 letters"),
    ],
)
def test_a_bad_bulk_command_exits_2_on_one_line_and_changes_nothing(
    capsys, database, argv, message
):
    job_id = enqueue(capsys, database, "--in", "1h")
    code, out, err = cli(capsys, *argv, "--database", database)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(message), line
    assert detail(capsys, database, job_id)["state"] == "scheduled"


@pytest.mark.parametrize("flags", [["--kind", "noop"], ["--dry-run"], ["--all"]])
@pytest.mark.parametrize("command", ["cancel", "retry"])
def test_an_id_with_a_bulk_flag_is_refused_and_changes_nothing(capsys, database, command, flags):
    job_id = enqueue(capsys, database, "--in", "1h")
    if command == "retry":
        assert cli(capsys, "cancel", job_id, "--database", database)[0] == 0
    state = detail(capsys, database, job_id)["state"]
    code, out, err = cli(capsys, command, job_id, *flags, "--database", database)
    assert (code, out, err.strip()) == (2, "", "jobtable: give a job's ID or a filter (--state, "
        "--kind, --queue, --created-after, --created-before, --all, --dry-run), not both")  # fmt: skip
    assert detail(capsys, database, job_id)["state"] == state
