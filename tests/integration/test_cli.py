"""The CLI's refusals: one line naming the problem and the fix, a non-zero exit, no traceback."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from jobtable.entrypoints.cli import main
from jobtable.entrypoints.config import SETTINGS


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in [setting.env for setting in SETTINGS.values()] + ["JOBTABLE_API_TOKEN"]:
        monkeypatch.delenv(name, raising=False)


def run(capsys, *argv: str) -> tuple[int, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    return code, err


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if not line[:4].isdigit()]  # drop log lines
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--listen", "nonsense"], "is not HOST:PORT"),
        (["--listen", "127.0.0.1:99999"], "is not HOST:PORT"),
        (["--workers", "-1"], "at least 0"),
        (["--workers", "two"], "at least 0"),
        (["--queues", "mail,mail=2"], "--queues: queue 'mail' is named twice"),
        (["--queues", "mail=0"], "--queues: 'mail=0' needs a whole number of workers from 1"),
        (["--queues", "no spaces"], "--queues: 'no spaces' is not a queue name"),
        (["--grace", "-1"], "seconds"),
        (["--sqlite-synchronous", "off"], "full, normal"),
        (["--log-level", "loud"], "debug, info"),
        (["--log-format", "xml"], "--log-format 'xml' must be one of text, json"),
        (["--kinds", "no_such_module_here"], "cannot import 'no_such_module_here'"),
        (["--kinds", "json"], "has no register(kinds)"),
        (["--kinds", "not a module"], "is not a module name"),
        (
            ["--database", "postgresql://app:hunter2@127.0.0.1:1/jobs"],
            "database unavailable at postgresql://app:***@127.0.0.1:1/jobs: check the URL",
        ),
        (["--bogus-flag"], "unrecognized arguments"),
    ],
)
def test_serve_refuses_bad_configuration_in_one_line(tmp_path, capsys, args, expected):
    if "--database" not in args:
        args = ["--database", str(tmp_path / "jobs.db"), *args]
    code, err = run(capsys, "serve", *args)
    assert code != 0
    line = one_line(err)
    assert line.startswith("jobtable: ")
    assert expected in line
    assert "hunter2" not in err


@pytest.mark.parametrize("value", ["0", " 0 "])
def test_worker_refuses_zero_workers_and_points_at_serve(tmp_path, capsys, monkeypatch, value):
    for argv in (["--workers", value], []):
        if not argv:
            monkeypatch.setenv("JOBTABLE_WORKERS", value)
        code, err = run(capsys, "worker", "--database", str(tmp_path / "jobs.db"), *argv)
        assert code == 2
        line = one_line(err)
        assert "--workers 0: a worker process with no workers would run nothing" in line
        assert "jobtable serve --workers 0" in line
    assert not (tmp_path / "jobs.db").exists()  # refused before anything was opened


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--metrics-listen", "nonsense"], {},
         "--metrics-listen 'nonsense' is not HOST:PORT; use for example 127.0.0.1:8080 "
         "(or set JOBTABLE_METRICS_LISTEN)"),
        ([], {"JOBTABLE_METRICS_LISTEN": "127.0.0.1:70000"}, "JOBTABLE_METRICS_LISTEN"),
        ([], {"JOBTABLE_METRICS_PUBLIC": "maybe"}, "JOBTABLE_METRICS_PUBLIC 'maybe' must be true"),
        (["--log-format", "yaml"], {}, "--log-format 'yaml' must be one of text, json"),
    ],
)  # fmt: skip
def test_worker_refuses_bad_metrics_and_log_settings_before_opening_anything(
    tmp_path, capsys, monkeypatch, args, env, expected
):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, err = run(capsys, "worker", "--database", str(tmp_path / "jobs.db"), *args)
    assert code == 2
    assert expected in one_line(err)
    assert not (tmp_path / "jobs.db").exists()


def test_worker_refuses_a_metrics_address_in_use(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JOBTABLE_API_TOKEN", "t")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = run(
            capsys, "worker", "--database", str(tmp_path / "j.db"),
            "--metrics-listen", f"127.0.0.1:{port}",
        )  # fmt: skip
    assert code == 2
    assert "pick another --metrics-listen address" in one_line(err)


def test_serve_refuses_a_database_it_cannot_open(tmp_path, capsys):
    code, err = run(capsys, "serve", "--database", str(tmp_path / "missing" / "jobs.db"))
    assert code == 1
    assert "database unavailable" in one_line(err)


def test_serve_refuses_a_directory_as_database(tmp_path, capsys):
    code, err = run(capsys, "serve", "--database", str(tmp_path))
    assert code != 0
    assert "is a directory" in one_line(err)


def test_serve_refuses_an_address_in_use(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = run(
            capsys, "serve", "--database", str(tmp_path / "j.db"), "--listen", f"127.0.0.1:{port}"
        )
    assert code != 0
    assert "cannot listen on" in one_line(err)


def test_a_token_file_open_to_others_is_refused(tmp_path, capsys):
    token = tmp_path / "jobs.db.token"
    token.write_text("abc")
    token.chmod(0o644)
    code, err = run(capsys, "serve", "--database", str(tmp_path / "jobs.db"), "--listen",
                    "127.0.0.1:0")  # fmt: skip
    assert code != 0
    assert "chmod 600" in one_line(err)


def test_environment_variables_set_flags(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JOBTABLE_WORKERS", "-1")
    code, err = run(capsys, "serve", "--database", str(tmp_path / "j.db"))
    assert code != 0
    assert "JOBTABLE_WORKERS" in one_line(err)


def test_migrate_brings_a_database_up_to_date_and_says_what_it_applied(tmp_path, capsys):
    database = tmp_path / "jobs.db"
    assert main(["migrate", "--database", str(database)]) == 0
    assert (
        capsys.readouterr().out
        == f"{database}: applied 0001_jobs, 0002_jobs_status, 0003_runners, 0004_lifecycle, "
        "0005_observe, 0006_batched_history, 0007_readable_times, 0008_snooze_count, "
        "0009_unique_while_unfinished, 0010_cheap_rows, 0011_claimed_ahead, 0012_limits, "
        "0013_queue_limits, 0014_error_class_and_trace, "
        "0015_schedule_listing, 0016_failed_by_queue, 0017_minutes, 0018_limit_keys,"
        " 0019_ready_in_queue, 0020_keys_by_queue, 0021_one_limit_key_index,"
        " 0022_fair_turns_by_turn, 0023_history_by_index\n"
    )
    assert main(["migrate", "--database", str(database)]) == 0
    assert capsys.readouterr().out == f"{database}: already up to date\n"


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "jobs.db"
    assert main(["migrate", "--database", str(path)]) == 0
    return str(path)


def out_and_err(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_enqueue_prints_the_id_and_get_prints_the_job(database, capsys):
    capsys.readouterr()
    code, out, _ = out_and_err(
        capsys, "enqueue", "countdown", '{"seconds": 2}', "--kinds", "jobtable.core.demo",
        "--database", database,
    )  # fmt: skip
    assert code == 0
    job_id = out.strip()
    code, out, _ = out_and_err(capsys, "get", job_id, "--database", database)
    assert code == 0
    assert json.loads(out) == {
        "id": job_id, "kind": "countdown", "status": "queued", "result": None, "error": None,
    }  # fmt: skip


def test_enqueue_without_a_payload_sends_an_empty_object(database, capsys):
    code, out, _ = out_and_err(capsys, "enqueue", "noop", "--database", database)
    assert code == 0
    assert len(out.strip()) == 36


@pytest.mark.parametrize(
    ("argv", "expected", "exit_code"),
    [
        (["enqueue", "nope"], "unknown job kind 'nope'; known kinds: noop", 2),
        (["enqueue", "noop", "{not json"], "PAYLOAD_JSON is not valid JSON", 2),
        (["enqueue", "countdown", '{"seconds": "3"}', "--kinds", "jobtable.core.demo"],
         "payload does not match kind 'countdown': expected an integer @ $.seconds", 2),
        (["enqueue", "countdown", "[]", "--kinds", "jobtable.core.demo"], "expected an object @ $", 2),
        (["get", "01900000-0000-7000-8000-00000000dead"], "no job '01900000", 1),
    ],
)  # fmt: skip
def test_bad_input_exits_non_zero_with_one_line(database, capsys, argv, expected, exit_code):
    code, out, err = out_and_err(capsys, *argv, "--database", database)
    assert code == exit_code
    assert out == ""
    assert expected in one_line(err)


@pytest.mark.parametrize("command", [["get", "x"], ["enqueue", "noop"]])
def test_get_and_enqueue_refuse_a_database_that_does_not_exist(tmp_path, capsys, command):
    missing = tmp_path / "typo.db"
    code, _, err = out_and_err(capsys, *command, "--database", str(missing))
    assert code == 2
    assert "no database at" in one_line(err)
    assert not missing.exists()


def test_a_kinds_module_whose_register_fails_is_named(database, capsys, tmp_path, monkeypatch):
    (tmp_path / "broken_kinds.py").write_text("def register(kinds):\n    raise KeyError('x')\n")
    (tmp_path / "bad_import.py").write_text("import no_such_dependency_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = out_and_err(capsys, "enqueue", "noop", "--kinds", "broken_kinds",
                               "--database", database)  # fmt: skip
    assert code == 2
    assert "broken_kinds.register raised KeyError" in one_line(err)
    code, _, err = out_and_err(capsys, "enqueue", "noop", "--kinds", "bad_import",
                               "--database", database)  # fmt: skip
    assert (
        "cannot import 'bad_import': it imports 'no_such_dependency_here', which is not installed"
        in one_line(err)
    )
    code, _, err = out_and_err(capsys, "enqueue", "noop", "--kinds", "no_such_app.jobs",
                               "--database", database)  # fmt: skip
    assert code == 2
    assert "no module 'no_such_app' in the current directory or on PYTHONPATH" in one_line(err)


def test_a_kinds_module_in_the_current_directory_is_found_without_pythonpath(
    database, capsys, tmp_path, monkeypatch
):
    """As ``python -m`` and other job runners' CLIs do; a console script's path lacks it."""
    project = tmp_path / "project"
    (project / "myapp").mkdir(parents=True)
    (project / "myapp" / "__init__.py").write_text("")
    (project / "myapp" / "jobs.py").write_text(
        "from jobtable.core.demo import register\n"  # any module with register(kinds)
    )
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(project))])
    try:
        code, out, _ = out_and_err(capsys, "enqueue", "countdown", '{"seconds": 1}',
                                   "--kinds", "myapp.jobs", "--database", database)  # fmt: skip
    finally:
        for name in ("myapp.jobs", "myapp"):
            sys.modules.pop(name, None)
    assert code == 0
    assert len(out.strip()) == 36  # the job's id


@pytest.mark.parametrize(
    "command",
    ["serve", "worker", "migrate", "enqueue", "get", "cancel", "queues", "pause", "resume",
     "runners", "schedules"],
)  # fmt: skip
def test_every_command_has_help_naming_its_environment_variables(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "JOBTABLE_DATABASE" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_sqlite_durability_is_full_unless_asked_otherwise(command, monkeypatch):
    from jobtable.entrypoints.cli import build_parser

    monkeypatch.delenv("JOBTABLE_SQLITE_SYNCHRONOUS", raising=False)
    assert build_parser().parse_args([command]).sqlite_synchronous == "full"
    monkeypatch.setenv("JOBTABLE_SQLITE_SYNCHRONOUS", "normal")
    assert build_parser().parse_args([command]).sqlite_synchronous == "normal"


def test_a_worker_with_async_kinds_and_no_async_workers_is_refused_in_one_line(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "async_kinds.py").write_text(
        "import attrs\n"
        "@attrs.frozen\nclass Nothing:\n    pass\n"
        "@attrs.frozen\nclass Done:\n    def public(self): return {}\n"
        "async def nap(ctx, payload: Nothing) -> Done:\n    return Done()\n"
        "def register(kinds):\n    kinds.register('nap', nap, payload=Nothing)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, err = run(capsys, "worker", "--database", str(tmp_path / "jobs.db"),
                    "--kinds", "async_kinds", "--async-workers", "0")  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert "--async-workers 0: kinds nap have async def handlers and would never run" in line
