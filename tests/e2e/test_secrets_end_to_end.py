"""Three sentinels, a handler's exception text, the API token and the database password,
through real processes on every engine: none reaches a log, a row, an HTTP body or CLI output.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.e2e.conftest import JOBTABLE, REPO, ServeProcess
from tests.e2e.leaky_kinds import HANDLER_SECRET
from tests.support.databases import query

pytestmark = pytest.mark.e2e

TOKEN_SECRET = "token-sentinel-93aa7c"
PASSWORD_SECRET = "pw-sentinel-0d4f62"
SENTINELS = (HANDLER_SECRET, TOKEN_SECRET, PASSWORD_SECRET)


@pytest.fixture
def with_password(database):
    """The database, its PostgreSQL URL given a password (trust auth here ignores it)."""
    if not database.startswith("postgresql://"):
        return database
    url = database.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD_SECRET}@")
    assert PASSWORD_SECRET in url
    return url


def all_rows(database: str) -> str:
    if database.startswith("postgresql://"):
        tables = [
            name
            for (name,) in query(
                database, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        ]
    else:
        tables = [
            name
            for (name,) in query(database, "SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
    assert "jobs" in tables
    return json.dumps(
        {table: query(database, f"SELECT * FROM {table}") for table in tables}, default=str
    )


def test_no_sentinel_reaches_logs_rows_bodies_or_cli_output(with_password, tmp_path):
    database = with_password
    env = {"JOBTABLE_API_TOKEN": TOKEN_SECRET, "JOBTABLE_KINDS": "tests.e2e.leaky_kinds"}
    server = ServeProcess(database, "--log-level", "debug", env=env)
    try:
        assert server.token == TOKEN_SECRET
        bodies = []
        status, accepted = server.request("/api/v1/jobs", body={"kind": "leaky", "payload": {}})
        assert status == 202
        bodies.append(json.dumps(accepted))
        job_id = accepted["id"]
        failed = server.poll_job(job_id, lambda job: job["status"] == "failed")
        assert (failed["error"], failed["result"]) == ("internal_error", {"text": "working"})
        bodies.append(json.dumps(failed))
        for path in ("/health", "/api/v1/openapi.json", "/api/v1/jobs/nope"):
            bodies.append(json.dumps(server.request(path)))
        bodies.append(json.dumps(server.request(f"/api/v1/jobs/{job_id}", token="wrong")))

        cli_env = {
            "PYTHONPATH": str(REPO),
            "PATH": os.environ["PATH"],
            "JOBTABLE_DATABASE": database,
            **env,
        }
        outputs = [
            subprocess.run([JOBTABLE, *argv], capture_output=True, text=True, env=cli_env, timeout=60, check=False)
            for argv in (
                ["enqueue", "leaky", "--wait"],
                ["get", job_id],
                ["enqueue", "echo", '{"text": 5}'],
                ["enqueue", "nope"],
                ["migrate", "--log-level", "debug"],
            )
        ]  # fmt: skip
        assert [done.returncode for done in outputs] == [1, 0, 2, 2, 0]  # 2: bad input
    finally:
        assert server.stop() == 0
    everything = {
        "serve log": "".join(server.log),
        "rows": all_rows(database),
        "http bodies": "\n".join(bodies),
        "cli output": "\n".join(done.stdout + done.stderr for done in outputs),
    }
    assert "exception_type=ConnectionError" in everything["serve log"]
    for where, text in everything.items():
        for sentinel in SENTINELS:
            assert sentinel not in text, f"{sentinel} found in {where}"
