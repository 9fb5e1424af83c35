"""The CLI against a running ``jobtable serve``: enqueue in one process, run in another."""

from __future__ import annotations

import json
import subprocess
import urllib.request

import pytest

from tests.e2e.conftest import JOBTABLE, REPO
from tests.support.databases import database_for

pytestmark = pytest.mark.e2e


def cli(*argv: str, database) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [JOBTABLE, *argv, "--database", str(database), "--kinds", "jobtable.core.demo"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def test_enqueue_wait_follows_a_countdown_run_by_serve(tmp_path, serve_processes):
    database = tmp_path / "jobs.db"
    server = serve_processes(database, "--kinds", "jobtable.core.demo")

    done = cli("enqueue", "countdown", '{"seconds": 2}', "--wait", database=database)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["status"] == "succeeded"
    assert lines[-1]["result"] == {"remaining": 0, "counted": 2}
    assert {"remaining": 2} in [line["result"] for line in lines[:-1]]  # progress was shown

    failed = cli("enqueue", "countdown", '{"seconds": -1}', "--wait", database=database)
    assert failed.returncode == 1
    assert json.loads(failed.stdout.splitlines()[-1])["error"] == "negative_seconds"
    assert failed.stderr.strip().endswith("failed: negative_seconds")
    assert server.stop() == 0


def test_post_then_get_over_real_http(tmp_path, serve_processes):
    database = tmp_path / "jobs.db"
    server = serve_processes(database, "--kinds", "jobtable.core.demo")
    request = urllib.request.Request(
        server.base_url + "/api/v1/jobs",
        data=json.dumps({"kind": "countdown", "payload": {"seconds": 1}}).encode(),
        headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 202
        job_id = json.loads(response.read())["id"]
        assert response.headers["Location"] == f"/api/v1/jobs/{job_id}"
    body = server.poll_job(job_id, lambda job: job["status"] == "succeeded")
    assert body["result"] == {"remaining": 0, "counted": 1}
    assert server.stop() == 0


def raw_exchange(server, request: bytes) -> tuple[int, dict]:
    import socket

    host, port = server.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, body = data.partition(b"\r\n\r\n")
                length = [
                    line
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ]
                if length and len(body) >= int(length[0].split(b":")[1]):
                    break
    status = int(head.split(b" ")[1])
    return status, json.loads(body)


def test_waitress_own_refusals_use_the_envelope(tmp_path, serve_processes):
    server = serve_processes(tmp_path / "jobs.db")
    auth = f"Authorization: Bearer {server.token}\r\nContent-Type: application/json\r\n".encode()
    big = b"x" * (70 * 1024)
    chunked = (
        b"POST /api/v1/jobs HTTP/1.1\r\nHost: t\r\n" + auth + b"Transfer-Encoding: chunked\r\n\r\n"
        + f"{len(big):x}\r\n".encode() + big + b"\r\n0\r\n\r\n"
    )  # fmt: skip
    assert raw_exchange(server, chunked) == (
        413, {"error": {"code": "payload_too_large", "message": "the request body exceeds 65536 bytes"}},
    )  # fmt: skip
    declared = (
        b"POST /api/v1/jobs HTTP/1.1\r\nHost: t\r\n" + auth + b"Content-Length: 999999\r\n\r\n"
    )
    assert raw_exchange(server, declared)[0] == 413
    status, body = raw_exchange(server, b"GARBAGE\r\n\r\n")
    assert status == 400
    assert body["error"]["code"] == "invalid_request"
    for length in (b":", b"-1", b"1e3", b"12, 12"):
        malformed = (
            b"POST /api/v1/jobs HTTP/1.1\r\nHost: t\r\n"
            + auth
            + b"Content-Length: "
            + length
            + b"\r\n\r\n{}"
        )
        status, body = raw_exchange(server, malformed)
        assert (status, body["error"]["code"]) == (400, "invalid_request"), length
    assert server.stop() == 0


def test_a_worker_process_runs_what_another_process_enqueues(tmp_path):
    import signal

    database = tmp_path / "jobs.db"
    subprocess.run([JOBTABLE, "migrate", "--database", str(database)], check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    worker = subprocess.Popen(
        [JOBTABLE, "worker", "--database", str(database), "--kinds", "jobtable.core.demo"],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "worker.log").open("w"),
    )
    try:
        done = cli("enqueue", "countdown", '{"seconds": 1}', "--wait", database=database)
        assert done.returncode == 0, (tmp_path / "worker.log").read_text()
        assert json.loads(done.stdout.splitlines()[-1])["status"] == "succeeded"
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(30) == 0


@pytest.fixture
def schema_url(tmp_path):
    with database_for("postgres", tmp_path) as url:
        yield url


def test_a_database_password_never_reaches_help_logs_or_errors(schema_url):
    # Trust auth here: the server ignores the password, so the URL still connects.
    secret = "pw-sentinel-71c3"
    with_password = schema_url.replace("postgresql://postgres@", f"postgresql://postgres:{secret}@")
    assert secret in with_password
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "JOBTABLE_DATABASE": with_password}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([JOBTABLE, *argv], capture_output=True, text=True, env=env,
                              timeout=60, check=False)  # fmt: skip

    outputs = [
        run("serve", "--help"),
        run("migrate"),
        run("get", "01900000-0000-7000-8000-00000000dead"),
        run("enqueue", "nope"),
        run("migrate", "--database", with_password.replace("127.0.0.1:5432", "127.0.0.1:1")),
    ]
    assert outputs[1].returncode == 0
    assert "***" in outputs[1].stdout
    assert outputs[4].returncode == 1
    assert "postgres:***@127.0.0.1:1" in outputs[4].stderr
    for done in outputs:
        assert secret not in done.stdout + done.stderr
