"""The CLI's refusals: one line naming the problem and the fix, a non-zero exit, no traceback."""

from __future__ import annotations

import socket

import pytest

from entrypoints.cli import main


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ("JOBTABLE_DATABASE", "JOBTABLE_LISTEN", "JOBTABLE_WORKERS", "JOBTABLE_KINDS",
                 "JOBTABLE_API_TOKEN", "JOBTABLE_GRACE"):  # fmt: skip
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
        (["--workers", "0"], "at least 1"),
        (["--workers", "two"], "at least 1"),
        (["--grace", "-1"], "seconds"),
        (["--sqlite-synchronous", "off"], "full, normal"),
        (["--log-level", "loud"], "debug, info"),
        (["--kinds", "no_such_module_here"], "cannot import 'no_such_module_here'"),
        (["--kinds", "json"], "has no register(kinds)"),
        (["--kinds", "not a module"], "is not a module name"),
        (["--database", "postgresql://app:hunter2@db/jobs"], "PostgreSQL"),
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
    monkeypatch.setenv("JOBTABLE_WORKERS", "0")
    code, err = run(capsys, "serve", "--database", str(tmp_path / "j.db"))
    assert code != 0
    assert "JOBTABLE_WORKERS" in one_line(err)


def test_migrate_brings_a_database_up_to_date(tmp_path, capsys):
    database = tmp_path / "jobs.db"
    assert main(["migrate", "--database", str(database)]) == 0
    assert "schema up to date" in capsys.readouterr().out
    assert database.exists()


@pytest.mark.parametrize("command", ["serve", "worker", "migrate"])
def test_every_command_has_help_naming_its_environment_variables(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "JOBTABLE_DATABASE" in capsys.readouterr().out
