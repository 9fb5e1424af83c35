"""HTTP load against a real ``jobtable serve``: 50 clients mixing POST and GET beside 50
open event streams, then SIGTERM.

    python -m tests.soak.http_load --engine sqlite --seconds 60      # by hand, full size
    python -m tests.soak.http_load --engine postgres --seconds 60    # needs JOBTABLE_TEST_POSTGRES

Each client keeps one connection and, at random, POSTs a ``noop`` job or
GETs a job it was given (and now and then counts a bulk retry, or lists the schedules), while 50 event streams stay open on jobs due in a
day (tests/soak/held_streams.py); after the load they are cancelled and every
stream must deliver its job's end. After a warm-up (a tenth of the
run) the server's RSS is read, and again at the end. Then the load runs once
more, with 50 new streams open, and SIGTERM lands in the middle of it: every
request answered must be whole and not a 5xx, every stream must end cleanly,
the process must exit 0 within its grace, and every job that got a 202, in
either phase, must be in the database. Prints the verdict; exit 1 if any part
fails.
"""

from __future__ import annotations

import argparse
import http.client
import random
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from tests.e2e.conftest import ServeProcess
from tests.soak.held_streams import HeldStreams
from tests.support.databases import database_for, query
from tests.support.seeds import chosen_seed

GRACE = 10.0
TOKEN = "load-test-token"
DRY_RETRY = b'{"filter":{"state":"failed"},"dry_run":true}'
"""One request in forty: a bulk retry's count; one in forty: the schedules."""


@attrs.define
class Tally:
    """What the clients saw; appended to from many threads under one lock."""

    latencies: dict[str, list[float]] = attrs.Factory(lambda: {"POST": [], "GET": []})
    statuses: dict[int, int] = attrs.Factory(dict)
    accepted: list[str] = attrs.Factory(list)
    errors: list[str] = attrs.Factory(list)
    dropped: int = 0
    """Connections the server closed or refused once it was stopping (no answer was due)."""
    lock: threading.Lock = attrs.Factory(threading.Lock)

    def count(self) -> int:
        return sum(len(values) for values in self.latencies.values())


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def client(
    base_url: str, tally: Tally, stop: threading.Event, *, stopping: threading.Event, seed: int
) -> None:
    chance = random.Random(seed)
    address = urlsplit(base_url)
    conn = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    try:
        while not stop.is_set():
            with tally.lock:
                known = (
                    tally.accepted[chance.randrange(len(tally.accepted))]
                    if tally.accepted
                    else None
                )
            roll = chance.random()
            method = "GET" if known and roll < 0.45 else "POST"
            if roll >= 0.95:
                method = "BULK" if roll < 0.975 else "SCHEDULES"
            started = time.perf_counter()
            try:
                if method == "POST":
                    conn.request(
                        "POST",
                        "/api/v1/jobs",
                        body=b'{"kind":"noop","payload":{}}',
                        headers=headers,
                    )
                elif method == "BULK":  # an operator counting what a bulk retry would take
                    conn.request("POST", "/api/v1/jobs/retry", body=DRY_RETRY, headers=headers)
                elif method == "SCHEDULES":
                    conn.request("GET", "/api/v1/schedules", headers=headers)
                else:
                    conn.request("GET", f"/api/v1/jobs/{known}", headers=headers)
                response = conn.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException) as error:
                with tally.lock:
                    if stopping.is_set():
                        tally.dropped += 1
                    else:
                        tally.errors.append(f"{method}: {type(error).__name__}")
                return
            elapsed = time.perf_counter() - started
            expected = 202 if method == "POST" else 200
            with tally.lock:
                tally.latencies.setdefault(method, []).append(elapsed)
                tally.statuses[response.status] = tally.statuses.get(response.status, 0) + 1
                if response.status == 202:
                    tally.accepted.append(body.split(b'"id":"', 1)[1].split(b'"', 1)[0].decode())
                elif response.status != expected:
                    tally.errors.append(f"{method}: {response.status} {body[:120]!r}")
            if response.will_close:
                return
    finally:
        conn.close()


def run_clients(
    base_url: str,
    clients: int,
    tally: Tally,
    stop: threading.Event,
    stopping: threading.Event,
    *,
    seed: int,
) -> list[threading.Thread]:
    threads = [
        threading.Thread(target=client, args=(base_url, tally, stop),
                         kwargs={"stopping": stopping, "seed": seed + n}, daemon=True)
        for n in range(clients)
    ]  # fmt: skip
    for thread in threads:
        thread.start()
    return threads


@attrs.define
class LoadReport:
    engine: str
    seconds: float
    clients: int
    tally: Tally
    rss_after_warmup_kib: int
    rss_end_kib: int
    stop_tally: Tally
    exit_code: int | None
    exit_seconds: float
    lost: int
    streams: HeldStreams
    stop_streams: HeldStreams

    @property
    def rss_growth_kib(self) -> int:
        return self.rss_end_kib - self.rss_after_warmup_kib

    @property
    def passed(self) -> bool:
        return (
            not self.tally.errors
            and not self.stop_tally.errors
            and self.lost == 0
            and self.exit_code == 0
            and self.exit_seconds < GRACE
            and not self.streams.errors
            and not self.stop_streams.errors
            and self.streams.finished == self.stop_streams.finished == len(self.streams.streams)
        )

    def lines(self) -> list[str]:
        tally = self.tally
        lines = [
            f"HTTP load on {self.engine}, {self.clients} clients, {self.seconds:.0f} s: {'PASS' if self.passed else 'FAIL'}",
            f"  requests               {tally.count()} ({tally.count() / self.seconds:.0f}/s), statuses {dict(sorted(tally.statuses.items()))}",
        ]
        for method, values in tally.latencies.items():
            lines.append(
                f"  {method:<4} latency ms       p50 {percentile(values, 0.5) * 1000:.1f}, "
                f"p99 {percentile(values, 0.99) * 1000:.1f}, max {max(values, default=0) * 1000:.1f}"
            )
        lines += [
            f"  errors                 {len(tally.errors)} {tally.errors[:3]}",
            f"  server RSS             {self.rss_after_warmup_kib / 1024:.1f} MiB after warm-up, "
            f"{self.rss_end_kib / 1024:.1f} MiB at the end ({self.rss_growth_kib / 1024:+.1f} MiB)",
            f"  SIGTERM under load     exit {self.exit_code} after {self.exit_seconds:.2f}s (grace {GRACE:.0f}s); "
            f"{self.stop_tally.count()} answered, {self.stop_tally.dropped} connections closed, "
            f"errors {len(self.stop_tally.errors)} {self.stop_tally.errors[:3]}",
            f"  accepted jobs lost     {self.lost} of {len(tally.accepted) + len(self.stop_tally.accepted)} (must be 0)",
            f"  event streams          {len(self.streams.streams)} open through the load, "
            f"{self.streams.finished} told their job's end after it; "
            f"{self.stop_streams.finished} of {len(self.stop_streams.streams)} ended cleanly at "
            f"SIGTERM; errors {len(self.streams.errors) + len(self.stop_streams.errors)} "
            f"{(self.streams.errors + self.stop_streams.errors)[:3]}",
        ]
        return lines


def load(
    engine: str,
    database: str,
    seconds: float,
    clients: int,
    *,
    streams: int = 50,
    seed: int | None = None,
) -> LoadReport:
    seed = chosen_seed(f"http load ({engine})", seed)
    env = {"JOBTABLE_API_TOKEN": TOKEN, "JOBTABLE_DATABASE": database}
    server = ServeProcess(
        Path(database) if engine == "sqlite" else database, "--grace", str(GRACE), env=env
    )  # type: ignore[arg-type]
    try:
        held = HeldStreams.open(server, streams)
        tally, stop, never = Tally(), threading.Event(), threading.Event()
        threads = run_clients(server.base_url, clients, tally, stop, never, seed=seed)
        stop.wait(seconds / 10)  # the warm-up's length, not a wait for a result
        rss_after_warmup = rss_kib(server.process.pid)
        stop.wait(seconds * 9 / 10)
        stop.set()
        for thread in threads:
            thread.join(60)
        rss_end = rss_kib(server.process.pid)
        held.release()

        held_at_stop = HeldStreams.open(server, streams)
        stop_tally, stop_again, stopping = Tally(), threading.Event(), threading.Event()
        stop_tally.accepted = list(tally.accepted[-100:])  # GETs of known jobs from the start
        known = len(stop_tally.accepted)
        threads = run_clients(server.base_url, clients, stop_tally, stop_again, stopping, seed=seed)
        stop_again.wait(1.0)  # SIGTERM lands a second into the load
        stopping.set()
        signalled = time.monotonic()
        exit_code = server.stop(within=GRACE + 20)
        exit_seconds = time.monotonic() - signalled
        stop_again.set()
        for thread in threads:
            thread.join(60)
        held_at_stop.expect_ended()
    finally:
        if server.process.poll() is None:
            server.process.kill()
    accepted = tally.accepted + stop_tally.accepted[known:]
    stored = {job_id for (job_id,) in query(database, "SELECT id FROM jobs")}
    lost = sum(1 for job_id in accepted if job_id not in stored)
    return LoadReport(
        engine,
        seconds,
        clients,
        tally,
        rss_after_warmup,
        rss_end,
        stop_tally,
        exit_code,
        exit_seconds,
        lost,
        held,
        held_at_stop,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="50 HTTP clients and 50 open event streams against jobtable serve, "
        "then SIGTERM."
    )
    parser.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    import tempfile

    workdir = Path(tempfile.mkdtemp(prefix="jobtable-load-"))
    with database_for(args.engine, workdir) as database:
        report = load(
            args.engine, database, args.seconds, args.clients, streams=args.streams, seed=args.seed
        )
    print("\n".join(report.lines()))
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
