"""SQLite's instructions a job for its insert, claim and end, per schema variant: the
figures of row_costs.py counted by callgrind instead of timed, so other work on the
machine cannot move them. Only instructions inside SQLite's statement engine
(sqlite3VdbeExec, triggers and commits included) are counted, and the counters are
dumped at each phase's end (a marker statement, sqlite_source_id()). Not a test: run by hand,

    bench/run row_instructions.py                       # every variant, 1,000 jobs
    bench/run row_instructions.py --only 'full schema'
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
from typing import Any

from row_costs import KINDS, NOW, Sqlite, job_rows, variants

PHASES = ("insert", "claim", "end")


def run_one(variant: str, jobs: int, batch: int, folder: str) -> None:
    """Inside valgrind: make the variant, then run each phase, a marker after each."""
    schema = variant.split(":")[0]
    engine = Sqlite(folder, "normal")
    engine.run(variants("sqlite", schema)[variant])
    rows = job_rows(jobs, engine.stamp)
    insert, claim, end = (
        engine.queries[n] for n in ("create_job", "claim_next_job", "end_attempt")
    )
    now = engine.stamp(NOW)
    engine.conn.execute("SELECT sqlite_source_id()")  # the set-up's count is dropped
    for at in range(0, jobs, batch):
        engine.each(insert, rows[at : at + batch])
    engine.conn.execute("SELECT sqlite_source_id()")
    claimed: list[Any] = []
    params = {"runner_id": "r", "now": now, "kinds": engine.names(KINDS), "queues": None}
    while got := engine.claim(claim, {**params, "limit": batch})[1]:
        claimed += got
    engine.conn.execute("SELECT sqlite_source_id()")
    ends = [
        {"id": job_id, "runner_id": "r", "attempt": attempt, "status": "succeeded",
         "result": '{"ok":true}', "code": None, "now": now}
        for job_id, attempt in claimed
    ]  # fmt: skip
    for at in range(0, len(ends), batch):
        engine.each(end, ends[at : at + batch])
    engine.conn.execute("SELECT sqlite_source_id()")
    engine.close()


def counted(variant: str, jobs: int, batch: int) -> list[float]:
    """Instructions a job in each phase, from one run under callgrind."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-atstart=no", "--toggle-collect=sqlite3VdbeExec",
             "--dump-after=sqlite3_sourceid",
             sys.executable, __file__, "--inside", variant, "--jobs", str(jobs),
             "--batch", str(batch), "--folder", folder],
            check=True, capture_output=True,
        )  # fmt: skip
        totals = []
        for path in sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1])):
            with open(path) as dump:
                summary = [line for line in dump if line.startswith("summary:")]
            totals.append(int(summary[0].split()[1]) if summary else 0)
    # Dumps: after the set-up's marker, then after each phase's.
    return [count / jobs for count in totals[1:4]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--schemas", default="before,now")
    parser.add_argument("--only", default="")
    parser.add_argument("--inside", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        run_one(args.inside, args.jobs, args.batch, args.folder)
        return
    print(f"SQLite: instructions a job, {args.jobs:,} jobs, batches of {args.batch}\n")
    print("| variant | insert | claim | end | claim + end |")
    print("|---|---:|---:|---:|---:|")
    for schema in args.schemas.split(","):
        for variant in variants("sqlite", schema):
            if args.only in variant:
                insert, claim, end = counted(variant, args.jobs, args.batch)
                row = f"| {variant} | {insert:,.0f} | {claim:,.0f} | {end:,.0f} | {claim + end:,.0f} |"
                print(row, flush=True)


if __name__ == "__main__":
    main()
