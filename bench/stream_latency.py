"""Time from a handler's ``publish`` to an SSE client receiving it, one process and across.

``jobtable serve`` (a process of its own) serves ``GET /api/v1/jobs/{id}/events``
to a client in this process; the job's handler runs either in serve itself
(``--workers 1``: one process) or in a ``jobtable worker`` beside a
``serve --workers 0`` (across processes: the change reaches serve by SQLite
file events or PostgreSQL NOTIFY). Each partial result carries the wall-clock
time just before ``publish`` was called (same host, same clock); the client
notes when its event arrived. The figure is the p50 and p99 over PUBLISHES
publishes 20 ms apart, after the stream is open. Run by hand:

    bench/run stream_latency.py                   # SQLite and PostgreSQL (the test server)
    bench/run stream_latency.py --publishes 100 --postgres ''   # quick, SQLite only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
TOKEN = "bench-stream-token"
GAP = 0.02
sys.path[:0] = [str(HERE), str(REPO)]

from process_bench import fresh_postgres  # noqa: E402

from tests.support.sse import LiveStream  # noqa: E402


def start(command: str, database: str, *extra: str, synchronous: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{HERE}:{REPO}", "JOBTABLE_API_TOKEN": TOKEN}
    return subprocess.Popen(
        [JOBTABLE, command, "--database", database, "--kinds", "stream_kinds",
         "--log-level", "info", *extra]
        + (["--sqlite-synchronous", synchronous] if not database.startswith("postgres") else []),
        env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip


def wait_for_line(process: subprocess.Popen, pattern: str) -> re.Match[str]:
    """The first line of its log that matches; the rest is read and dropped, so a full
    pipe never holds the process up."""
    stderr = process.stderr
    assert stderr is not None
    for line in stderr:
        found = re.search(pattern, line)
        if found:
            threading.Thread(target=lambda: all(stderr), daemon=True).start()
            return found
    raise RuntimeError(f"the process ended before saying {pattern!r}")


def latencies(base_url: str, publishes: int) -> list[float]:
    request = urllib.request.Request(
        base_url + "/api/v1/jobs",
        data=json.dumps({"kind": "publisher", "payload": {
            "count": publishes, "gap": GAP, "start_after": 1.0}}).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request) as answer:
        job_id = json.loads(answer.read())["id"]
    host, port = base_url.removeprefix("http://").split(":")
    stream = LiveStream(
        (host, int(port)), f"/api/v1/jobs/{job_id}/events", {"Authorization": f"Bearer {TOKEN}"}
    )
    seen = []
    while (event := stream.next()) is not None:
        arrived = time.time()
        if event.job["status"] == "running" and event.job["result"] is not None:
            seen.append(arrived - event.job["result"]["at"])
    stream.close()
    assert len(seen) == publishes, f"{len(seen)} of {publishes} partial results arrived"
    return seen


def run(database: str, *, across: bool, publishes: int, synchronous: str) -> list[float]:
    workers = "0" if across else "1"
    serve = start("serve", database, "--listen", "127.0.0.1:0", "--workers", workers,
                  synchronous=synchronous)  # fmt: skip
    worker = None
    try:
        base_url = wait_for_line(serve, r"listening on (http://[\d.]+:\d+)").group(1)
        if across:
            worker = start("worker", database, "--workers", "1", synchronous=synchronous)
            wait_for_line(worker, r" worker: database=")
        latencies(base_url, 5)  # warm up: connections, caches
        return latencies(base_url, publishes)
    finally:
        for process in (worker, serve):
            if process is not None:
                process.terminate()
                process.wait(30)


def row(engine: str, mode: str, values: list[float]) -> str:
    cuts = statistics.quantiles([value * 1000 for value in values], n=100, method="inclusive")
    return f"| {engine} | {mode} | {len(values)} | {cuts[49]:.2f} | {cuts[98]:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--publishes", type=int, default=300)
    parser.add_argument("--sqlite-synchronous", default="full", choices=["full", "normal"])
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-stream-bench-")
    engines = {"SQLite": lambda: os.path.join(folder, f"{uuid.uuid4().hex}.db")}
    if args.postgres:
        engines["PostgreSQL"] = lambda: fresh_postgres(args.postgres)
    rows = []
    for engine, fresh in engines.items():
        for mode, across in (("one process", False), ("across processes", True)):
            values = run(fresh(), across=across, publishes=args.publishes,
                         synchronous=args.sqlite_synchronous)  # fmt: skip
            rows.append(row(engine, mode, values))
    print(f"\npublish -> SSE client, {args.publishes} publishes {GAP * 1000:.0f} ms apart; "
          f"SQLite synchronous={args.sqlite_synchronous}\n")  # fmt: skip
    print("| store | handler runs | publishes | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
