"""A process that forks after opening the store (a handler using multiprocessing, a pre-fork server).

The child must neither keep a dead parent "alive" through what it inherited
(a lock file's descriptor, a lock session's socket) nor end the parent's
lock when it closes the store it inherited.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from jobtable.core import LockState
from tests.contract.test_store_contract import runner_info, sighting
from tests.support.stores import open_store


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    from contextlib import ExitStack

    with ExitStack() as stack:
        opened = open_store(request.param, tmp_path, stack)
        stack.callback(opened.close)
        yield opened


def test_a_child_closing_the_store_it_inherited_leaves_the_parents_lock_held(store):
    store.register_runner(runner_info("runner-parent"), now=runner_info("x").started_at)
    child = os.fork()
    if child == 0:  # the child: close what it inherited, then leave at once
        code = 0
        try:
            store.close()
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sighting(store, "runner-parent").lock is LockState.HELD
    assert store.confirm_liveness("runner-parent", timeout=5) is True  # not even taken again


PARENT = textwrap.dedent("""
    import os, signal, sys, time
    from tests.support.stores import open_store
    from tests.contract.test_store_contract import runner_info
    from contextlib import ExitStack
    from pathlib import Path

    engine, folder, url, schema = sys.argv[1:5]
    if engine == "postgres":
        from jobtable.adapters.postgres import PostgresStore
        store = PostgresStore.open(url, now=runner_info("x").started_at, schema=schema)
    else:
        store = open_store(engine, Path(folder), ExitStack())
    store.register_runner(runner_info("runner-parent"), now=runner_info("x").started_at)
    child = os.fork()
    if child == 0:
        quiet = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):  # not the pipes the test reads to their end
            os.dup2(quiet, stream)
        time.sleep(120)  # lingers, holding whatever else it inherited
        os._exit(0)
    print(child, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # the parent dies hard
""")


def test_a_dead_parents_lock_is_absent_while_its_forked_child_lives(store, tmp_path):
    from jobtable.adapters.sqlite import SqliteStore

    if isinstance(store, SqliteStore):
        args = ["sqlite", str(tmp_path), "", ""]
    else:
        url = store._conninfo  # the test schema's connection string, search_path included
        args = ["postgres", "", url, ""]
    parent = subprocess.run(
        [sys.executable, "-c", PARENT, *args], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": os.getcwd()}, check=False,
    )  # fmt: skip
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    child = int(parent.stdout.strip())
    try:
        os.kill(child, 0)  # alive
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            found = sighting(store, "runner-parent")
            if found is not None and found.lock is LockState.ABSENT:
                break
            time.sleep(0.05)
        assert sighting(store, "runner-parent").lock is LockState.ABSENT
        os.kill(child, 0)  # and still alive: it is not what ended the lock
    finally:
        os.kill(child, signal.SIGKILL)
