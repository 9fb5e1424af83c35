"""The docs' shell blocks (``<!-- shell: name -->``), pasted in order into fresh shells.

A copy of the repository (what git tracks, no virtual environment, taken
from a checkout in which a user left the docs' ``myapp/`` untracked) gets
the README's quickstart as written: a new ``.venv``, an editable install,
``jobtable serve``. Then, each in a new shell in that folder, the other blocks:
the countdown, Get started's worker and commands (with its example kind), the
HTTP guide's calls, the CLI guide's, the metrics. Every command must exist and
do what the page says; only the port is moved off 8080 (``JOBTABLE_LISTEN``),
in case something else on the machine holds it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO, wait_until
from tests.integration.test_doc_examples import a_checkout_with_the_doc_examples, examples
from tests.support.docs import blocks as shell_blocks
from tests.support.docs import page_of
from tests.support.repository import copy_of_the_repository

pytestmark = pytest.mark.e2e
FENCE = re.compile(r"^```", re.MULTILINE)


def blocks() -> dict[str, str]:
    return shell_blocks("shell")


def shell(script: str, folder: Path, env: dict[str, str], **options) -> subprocess.Popen:
    return subprocess.Popen(["bash", "-c", script], cwd=folder, env=env, text=True, **options)


def run_block(
    name: str, folder: Path, env: dict[str, str], *, before: str = "", port: int = 8080
) -> subprocess.CompletedProcess:
    """A block in a new shell (after ``before``: what that shell ran already), on ``port``."""
    script = before + blocks()[name].replace("localhost:8080", f"localhost:{port}")
    return subprocess.run(
        ["bash", "-c", script], cwd=folder, env=env, text=True,
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip


def last_line_per_job(output: str) -> list[dict]:
    """The last JSON line printed for each job, in the order the jobs first appeared."""
    last: dict[str, dict] = {}
    for line in output.splitlines():
        if line.startswith("{"):
            job = json.loads(line)
            last[job["id"]] = job
    return list(last.values())


def json_values(output: str) -> list:
    """Every JSON value in ``output``, written one after another (curl adds no newline)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(output):
        if output[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(output, at)
        values.append(value)
    return values


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_job(port: int, folder: Path, job_id: str) -> dict:
    token = (folder / "jobtable.db.token").read_text().strip()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/jobs/{job_id}",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_the_docs_have_their_shell_blocks():
    assert set(blocks()) == {
        "quickstart", "countdown", "worker", "user-guide", "http", "http-lifecycle",
        "http-follow", "cli-lifecycle", "metrics",
    }  # fmt: skip


def test_the_quickstart_goes_from_serving_straight_to_the_other_shell():
    """Nothing to run (no test suite, no other block) between starting serve and using it."""
    readme = page_of("shell", "quickstart")
    assert readme == (REPO / "README.md").read_text(encoding="utf-8")  # its first screen
    between = readme.split(blocks()["quickstart"], 1)[1].split(blocks()["countdown"], 1)[0]
    assert "scripts/test" not in between
    # The quickstart's closing fence and the countdown's opening one: no block between.
    assert len(FENCE.findall(between)) == 2


def test_the_docs_pasted_in_order_into_fresh_shells_work(tmp_path):
    checkout = a_checkout_with_the_doc_examples(tmp_path / "checkout")
    folder = copy_of_the_repository(tmp_path / "jobtable", source=checkout)
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "JOBTABLE_LISTEN": f"127.0.0.1:{port}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    started: list[subprocess.Popen] = []
    try:
        serve_log = (tmp_path / "serve.log").open("w")
        started.append(shell(blocks()["quickstart"], folder, env, stdout=serve_log,
                             stderr=subprocess.STDOUT, start_new_session=True))  # fmt: skip
        wait_until(lambda: f"listening on http://127.0.0.1:{port}" in
                   (tmp_path / "serve.log").read_text(), within=300, what="the quickstart serving")  # fmt: skip

        countdown = run_block("countdown", folder, env)
        assert "command not found" not in countdown.stderr, countdown.stderr
        assert countdown.returncode == 1, countdown.stdout + countdown.stderr  # as the page says
        first, second = last_line_per_job(countdown.stdout)
        assert (first["status"], first["result"]) == ("succeeded", {"remaining": 0, "counted": 5})
        assert (second["status"], second["error"]) == ("failed", "negative_seconds")

        (folder / "myapp").mkdir()
        (folder / "myapp" / "__init__.py").write_text("")
        (folder / "myapp" / "jobs.py").write_text(examples()["myapp/jobs.py"])
        worker_log = (tmp_path / "worker.log").open("w")
        started.append(shell(". .venv/bin/activate\n" + blocks()["worker"], folder,
                             env, stderr=worker_log, start_new_session=True))  # fmt: skip
        wait_until(lambda: " worker: database=" in (tmp_path / "worker.log").read_text(),
                   within=60, what="the worker starting")  # fmt: skip

        # The shell the countdown ran in: its venv active.
        guide = run_block("user-guide", folder, env, before=". .venv/bin/activate\n")
        assert guide.returncode == 0, guide.stderr
        waited, got = last_line_per_job(guide.stdout)
        assert (waited["status"], waited["result"]) == ("succeeded", {"done": 3})
        assert got["kind"] == "count"  # jobtable get "$ID"

        http = run_block("http", folder, env, port=port)
        assert http.returncode == 0, http.stderr
        assert "HTTP/1.1 202 Accepted" in http.stdout
        assert '"kind":"countdown"' in http.stdout.splitlines()[-1]

        lifecycle = run_block("http-lifecycle", folder, env, port=port)
        assert lifecycle.returncode == 0, lifecycle.stderr
        duplicate, detail, paused, resumed, queues, runners, cancelled, batch = json_values(
            lifecycle.stdout
        )
        assert duplicate["duplicate"] is True
        assert (detail["id"], detail["queue"], detail["priority"]) == (
            duplicate["id"],
            "reports",
            2,
        )
        assert detail["waiting"][0].startswith("due at ")
        assert list(detail) == [
            "id", "kind", "status", "result", "error", "state", "payload", "queue", "priority",
            "run_at", "attempt", "max_attempts", "snoozes", "created_at", "started_at",
            "finished_at", "timeout", "waited", "attempts", "waiting",
        ]  # fmt: skip
        claimed = re.search(r'"attempt":(\d+),"max_attempts":(\d+)', blocks()["http-lifecycle"])
        assert claimed, "the HTTP guide shows the detail's attempt and max_attempts"
        assert (detail["attempt"], detail["max_attempts"]) == tuple(map(int, claimed.groups()))
        assert (paused["name"], paused["paused"], resumed["paused"]) == ("reports", True, False)
        assert "reports" in [queue["name"] for queue in queues["queues"]]
        assert len(runners["runners"]) == 2  # serve and the worker
        assert (cancelled["id"], cancelled["error"]) == (duplicate["id"], "cancelled")
        assert len(batch["ids"]) == 2

        follow = run_block("http-follow", folder, env, port=port)
        assert follow.returncode == 0, follow.stderr
        lines = follow.stdout.splitlines()
        # The whole stream, then the rest after Last-Event-ID 2: nothing lost or repeated.
        assert [int(line[4:]) for line in lines if line.startswith("id: ")] == [0, 1, 2, 3, 4, 3, 4]
        assert {line for line in lines if line.startswith("event: ")} == {"event: job"}
        listed = next(line for line in lines if line.startswith('{"jobs"'))
        (page,) = json_values(listed.split("HTTP/1.1")[0])  # the long-poll's status line follows
        assert [job["status"] for job in page["jobs"]] == ["succeeded", "succeeded"]
        assert page["next_cursor"] is not None
        assert "HTTP/1.1 200 OK" in follow.stdout and "Preference-Applied: wait=30" in lines
        changed, retried, refused = json_values(lines[-1])
        assert changed["status"] == "running"
        # Read back after the retry, so a worker may have taken it already: due now.
        assert (retried["status"] in ("queued", "running"), retried["error"]) == (True, None)
        assert "due now (it runs at once" in blocks()["http-follow"]
        wait_until(lambda: get_job(port, folder, retried["id"])["status"] == "succeeded",
                   within=60, what="the retried job, due in an hour before, running now")  # fmt: skip
        assert refused["error"]["code"] == "conflict"

        cli = run_block("cli-lifecycle", folder, env, before=". .venv/bin/activate\n")
        assert cli.returncode == 0, cli.stderr
        logged = [line for line in cli.stderr.splitlines() if " INFO jobtable." in line]
        said, counted = [line for line in cli.stderr.splitlines() if line not in logged]
        assert "duplicate of an existing job" in said  # the cancel of a queued job says nothing
        assert counted.startswith("jobtable: dry run: ") and "none changed" in counted
        assert any("bulk cancel done by=cli filter=state=scheduled queue=reports" in line
                   for line in logged), logged  # fmt: skip
        again_id, *rest, pruned = cli.stdout.splitlines()  # the first enqueue's id went into $ID
        assert pruned == "pruned 0 finished jobs"  # nothing is a week old yet
        items = [json.loads(line) for line in rest]
        detail, paused, resumed = items[:3]
        at = next(n for n, item in enumerate(items) if item.get("error") == "cancelled")
        listed, cancelled, retried, failed = items[3:at], items[at], items[at + 1], items[at + 2 :]
        dry, bulk_cancelled = [item for item in failed if "matched" in item]
        failed = [item for item in failed if "matched" not in item]
        in_state = [item for item in failed if item["error"] not in ("cancelled", "timed_out")]
        assert (dry["changed"], dry["matched"]) == (0, len(in_state))  # state failed only
        assert bulk_cancelled["matched"] == bulk_cancelled["changed"]
        assert (retried["id"], retried["error"]) == (again_id, None)
        assert retried["status"] in ("queued", "running")  # due now, as above
        assert failed and {(item["kind"], item["status"]) for item in failed} == {
            ("countdown", "failed")
        }
        assert (detail["id"], detail["queue"], detail["priority"]) == (again_id, "reports", 2)
        assert detail["waiting"][0].startswith("due at ")
        assert (paused["name"], paused["paused"], resumed["paused"]) == ("reports", True, False)
        assert "reports" in [item["name"] for item in listed if "counts" in item]
        assert len([item for item in listed if "host" in item]) == 2  # serve and the worker
        assert cancelled == {"id": again_id, "kind": "countdown", "status": "failed",
                             "result": None, "error": "cancelled"}  # fmt: skip

        metrics = run_block("metrics", folder, env, port=port)
        assert metrics.returncode == 0, metrics.stderr
        completions = "jobtable_job_completions_total{code="
        assert (
            f'{completions}"negative_seconds",final="true",kind="countdown"}} 1.0' in metrics.stdout
        )
        assert f'{completions}"succeeded",final="true",kind="countdown"}}' in metrics.stdout
        assert 'jobtable_jobs{kind="countdown",queue="default",status="running"}' in metrics.stdout
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(60)
