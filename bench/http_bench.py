"""HTTP throughput: POST and GET /api/v1/jobs beside a static Falcon resource on the same stack.

wrk drives 8 keep-alive connections over loopback against ``jobtable serve``
(SQLite, 2 workers running every posted noop job) and against
``static_server.py`` (the same waitress wrapper and thread count, one static
JSON resource): the ceiling of this stack on this machine, in the same run.
Run by hand: ``bench/run http_bench.py`` (``--seconds 3`` for a short check).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from local_server import free_port, wait_until_up

HERE = Path(__file__).resolve().parent
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))

POST_LUA = """
wrk.method = "POST"
wrk.body = '{"kind":"noop","payload":{}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("JOBTABLE_BENCH_TOKEN")
"""
GET_LUA = """
wrk.headers["Authorization"] = "Bearer " .. os.getenv("JOBTABLE_BENCH_TOKEN")
"""


def wrk(url: str, seconds: int, script: str, token: str) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    env = {**os.environ, "JOBTABLE_BENCH_TOKEN": token}
    done = subprocess.run(
        ["wrk", "-t2", "-c8", f"-d{seconds}s", "--latency", "-s", handle.name, url],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    os.unlink(handle.name)
    out = done.stdout
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )

    def latency(percent: str) -> float:
        found = re.search(rf"\s{percent}%\s+([\d.]+)(us|ms|s)", out)
        if not found:
            return float("nan")
        value, unit = float(found.group(1)), found.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "errors": (int(non_2xx.group(1)) if non_2xx else 0)
        + (sum(int(n) for n in socket_errors.groups()) if socket_errors else 0),
        "p50": latency("50"),
        "p99": latency("99"),
    }


def wait_for_drain(database: str, within: float = 300.0) -> None:
    import sqlite3

    deadline = time.monotonic() + within
    conn = sqlite3.connect(database)
    try:
        while time.monotonic() < deadline:
            (left,) = conn.execute(
                "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')"
            ).fetchone()
            if left == 0:
                return
            time.sleep(0.1)
    finally:
        conn.close()
    raise RuntimeError("the POSTed jobs never drained")


def run_static(seconds: int) -> dict[str, float]:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "static_server.py"), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_until_up(f"http://127.0.0.1:{port}/static")
        return wrk(f"http://127.0.0.1:{port}/static", seconds, GET_LUA, "unused")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


def serve_command(database: str, port: int, synchronous: str) -> list[str]:
    return [JOBTABLE, "serve", "--database", database, "--listen", f"127.0.0.1:{port}",
            "--sqlite-synchronous", synchronous, "--log-level", "warning"]  # fmt: skip


def jobs_per_fsync(seconds: int) -> tuple[int, int]:
    """8 POST clients at FULL against a ``serve`` run under strace, which counts its fsyncs.

    A run of its own: tracing slows each fsync a little, so its request rate is
    not reported. ``--seccomp-bpf`` stops the process at fsync and fdatasync
    only. Returns the jobs stored and the fsyncs the server made meanwhile
    (its start-up's few included).
    """
    folder = tempfile.mkdtemp(prefix="jobtable-http-fsync-")
    database = os.path.join(folder, "jobs.db")
    counts = os.path.join(folder, "strace.txt")
    port = free_port()
    server = subprocess.Popen(
        ["strace", "-f", "--seccomp-bpf", "-c", "-e", "trace=fsync,fdatasync", "-o", counts,
         *serve_command(database, port, "full")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health")
        token = Path(database + ".token").read_text().strip()
        wrk(f"http://127.0.0.1:{port}/api/v1/jobs", seconds, POST_LUA, token)
    finally:
        # To serve itself (strace's child): strace prints its counts once serve has exited.
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        for child in children:
            os.kill(int(child), signal.SIGTERM)
        server.wait(120)
    import sqlite3

    stored = sqlite3.connect(database).execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
    calls = 0
    for line in Path(counts).read_text().splitlines():
        fields = line.split()
        if fields and fields[-1] in ("fsync", "fdatasync"):
            calls += int(fields[3])  # % time, seconds, usecs/call, calls, [errors,] syscall
    shutil.rmtree(folder, ignore_errors=True)
    return stored, calls


def run_jobtable(seconds: int, synchronous: str) -> tuple[dict[str, float], dict[str, float], int]:
    folder = tempfile.mkdtemp(prefix="jobtable-http-bench-")
    database = os.path.join(folder, "jobs.db")
    port = free_port()
    server = subprocess.Popen(
        serve_command(database, port, synchronous),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health")
        token = Path(database + ".token").read_text().strip()
        post = wrk(f"http://127.0.0.1:{port}/api/v1/jobs", seconds, POST_LUA, token)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/jobs",
            data=b'{"kind":"noop","payload":{}}',
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        job_id = json.loads(urllib.request.urlopen(request, timeout=10).read())["id"]
        wait_for_drain(database)  # GET is measured alone, not beside the POSTed backlog
        get = wrk(f"http://127.0.0.1:{port}/api/v1/jobs/{job_id}", seconds, GET_LUA, token)
        import sqlite3

        stored = sqlite3.connect(database).execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
        return post, get, stored
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("http_bench needs wrk: apt-get install wrk")
    static = run_static(args.seconds)
    rows = [("static Falcon resource (ceiling)", static)]
    ratios = []
    for synchronous in ("full", "normal"):
        post, get, stored = run_jobtable(args.seconds, synchronous)
        rows += [(f"POST /api/v1/jobs, sqlite {synchronous}", post),
                 (f"GET /api/v1/jobs/{{id}}, sqlite {synchronous}", get)]  # fmt: skip
        ratios.append(f"sqlite {synchronous}: POST {post['rps'] / static['rps']:.2f}x, "
                      f"GET {get['rps'] / static['rps']:.2f}x the static ceiling; "
                      f"{stored:,} jobs stored")  # fmt: skip
    print(
        f"wrk -t2 -c8 -d{args.seconds}s over loopback, waitress with 4 threads (the default) in both\n"
    )
    print("| endpoint | requests/s | errors | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for name, figures in rows:
        print(f"| {name} | {figures['rps']:,.0f} | {figures['errors']:.0f} | "
              f"{figures['p50']:.2f} | {figures['p99']:.2f} |")  # fmt: skip
    print()
    for line in ratios:
        print(line)
    if shutil.which("strace"):
        stored, fsyncs = jobs_per_fsync(args.seconds)
        print(f"8 POST clients at FULL, under strace: {stored:,} jobs stored with {fsyncs:,} "
              f"fsyncs: {stored / max(fsyncs, 1):.2f} jobs per fsync")  # fmt: skip


if __name__ == "__main__":
    main()
