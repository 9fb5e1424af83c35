"""The FastAPI guide's example end to end, on both engines: uvicorn serves ``myapp/web.py``
(its lifespan opens an AsyncClient), a ``jobtable worker`` runs the ``async def`` kind of
``myapp/async_jobs.py``, and httpx enqueues through the endpoint and reads the job's
progress as server-sent events until it succeeds."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.e2e.conftest import JOBTABLE
from tests.integration.test_doc_examples import examples

DEADLINE = 60.0


def started(
    argv: list[str], cwd: Path, env: dict[str, str]
) -> tuple[subprocess.Popen, queue.Queue]:
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return process, lines


def line_matching(lines: queue.Queue, pattern: str, seen: list[str]) -> re.Match:
    while True:
        try:
            line = lines.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"never logged {pattern!r}:\n" + "".join(seen)) from None
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found


def test_the_readme_fastapi_example_streams_an_async_jobs_progress(tmp_path, database):
    project = tmp_path / "project"
    (project / "myapp").mkdir(parents=True)
    (project / "myapp" / "__init__.py").write_text("")
    for name in ("myapp/async_jobs.py", "myapp/web.py"):
        (project / name).write_text(examples()[name])
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBTABLE_")}
    env["JOBTABLE_DATABASE"] = database
    migrated = subprocess.run(
        [JOBTABLE, "migrate"], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert migrated.returncode == 0, migrated.stderr
    worker, worker_lines = started(
        [JOBTABLE, "worker", "--kinds", "myapp.async_jobs"], project, env
    )
    web, web_lines = started(
        [sys.executable, "-m", "uvicorn", "myapp.web:app", "--host", "127.0.0.1", "--port", "0"],
        project,
        {**env, "PYTHONPATH": str(project)},
    )
    seen: list[str] = []
    try:
        line_matching(worker_lines, r"worker: database=", seen)
        base = line_matching(web_lines, r"Uvicorn running on (http://[\d.]+:\d+)", seen).group(1)
        with httpx.Client(base_url=base, timeout=DEADLINE) as http:
            answer = http.post("/fetches", params={"pages": 3})
            assert answer.status_code == 200, answer.text
            job_id = answer.json()["id"]
            events = []
            with http.stream("GET", f"/fetches/{job_id}/events") as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                for line in stream.iter_lines():
                    if line.startswith("data: "):
                        events.append(json.loads(line.removeprefix("data: ")))
        assert events[-1] == {"status": "succeeded", "result": {"fetched": 3}}
        progress = [event["result"]["fetched"] for event in events if event["result"]]
        assert progress == sorted(progress) and progress[-1] == 3
        assert any(event["status"] == "running" for event in events)
        web.send_signal(signal.SIGTERM)  # the lifespan closes the AsyncClient
        line_matching(web_lines, r"Application shutdown complete", seen)
        web.wait(DEADLINE)  # uvicorn raises the signal again once shut down
    finally:
        for process in (web, worker):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(DEADLINE)
                except subprocess.TimeoutExpired:
                    process.kill()
    assert worker.returncode == 0
