"""The docs' example files (``<!-- example: myapp/... -->``, on any page) run as written.

Put where they say (``myapp/`` in the checkout), they pass the project's lint as
written, and leave every check of ``scripts/test`` passing whatever else a user
writes beside them.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from tests.support.docs import blocks
from tests.support.repository import REPO, a_checkout

CHECK = re.compile(r'^echo "== [^"]*";\s*\.venv/bin/(.+)$', re.MULTILINE)  # a line of scripts/test


def examples() -> dict[str, str]:
    return blocks("example")


def a_checkout_with_the_doc_examples(into: Path) -> Path:
    """A checkout in which a user followed the docs: their example files, untracked, in place."""
    checkout = a_checkout(into)
    (checkout / "myapp").mkdir()
    (checkout / "myapp" / "__init__.py").write_text("")  # empty, as Get started says
    for name, source in examples().items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(source)
    return checkout


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """A tool of this virtual environment, as the checkout's ``.venv/bin`` has it."""
    tool = str(Path(sys.executable).with_name(argv[0]))
    env = {name: value for name, value in os.environ.items() if not name.startswith("JOBTABLE_")}
    return subprocess.run(
        [tool, *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=240,
        check=False,
    )  # fmt: skip


def the_checks() -> list[list[str]]:
    """The commands ``scripts/test`` runs before pytest, read off the script."""
    commands = [shlex.split(line) for line in CHECK.findall((REPO / "scripts/test").read_text())]
    assert [command[0] for command in commands][-1] == "pytest", commands
    return commands[:-1]


@pytest.fixture
def myapp_jobs(monkeypatch):
    source = examples()["myapp/jobs.py"]
    package = types.ModuleType("myapp")
    package.__path__ = []
    module = types.ModuleType("myapp.jobs")
    monkeypatch.setitem(sys.modules, "myapp", package)
    monkeypatch.setitem(sys.modules, "myapp.jobs", module)
    exec(compile(source, "docs:myapp/jobs.py", "exec"), module.__dict__)
    return module


def test_the_docs_have_their_examples():
    assert set(examples()) == {
        "myapp/jobs.py",
        "myapp/embed.py",
        "myapp/enqueue_only.py",
        "myapp/wsgi.py",
        "myapp/test_jobs.py",
        "myapp/lifecycle.py",
        "myapp/limits.py",
        "myapp/async_jobs.py",
        "myapp/web.py",
        "myapp/tracing.py",
    }


def test_the_doc_examples_pass_the_projects_lint_as_written(tmp_path):
    checkout = a_checkout_with_the_doc_examples(tmp_path / "jobtable")
    for lint in (["ruff", "check"], ["ruff", "format", "--check"]):
        done = run([*lint, *sorted(examples())], checkout)  # named, so each is checked
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_projects_checks_pass_with_a_users_own_code_in_the_checkout(tmp_path):
    checkout = a_checkout_with_the_doc_examples(tmp_path / "jobtable")
    (checkout / "myapp" / "draft.py").write_text("import os\nx=1\n")  # unused, unformatted
    checks = the_checks()
    assert [command[0] for command in checks] == ["ruff", "ruff", "mypy", "lint-imports"]
    for check in checks:
        done = run(check, checkout)
        assert done.returncode == 0, f"{check}: {done.stdout}{done.stderr}"
    settings = tomllib.loads((checkout / "pyproject.toml").read_text())
    assert settings["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]  # not myapp/
    ran = run(["pytest", "-q", "-p", "no:cacheprovider", "myapp"], checkout)  # as the docs say
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout


def test_ruff_checks_every_python_file_the_project_tracks():
    """Its ``include`` names the project's folders: a new folder must be added there."""
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    shown = run(["ruff", "check", "--show-files", "."], REPO).stdout.split()
    assert set(tracked) <= {str(Path(name).relative_to(REPO)) for name in shown}


def test_the_docs_lifecycle_example_runs_as_written():
    import datetime

    from jobtable.adapters.testkit import JobTestKit

    namespace: dict = {}
    source = examples()["myapp/lifecycle.py"]
    exec(compile(source, "docs:myapp/lifecycle.py", "exec"), namespace)
    kit = JobTestKit()
    mail = namespace["register"](kit.kinds)
    assert [schedule.kind for schedule in kit.kinds.schedules()] == ["mail", "mail"]
    ids = namespace["enqueue_examples"](mail)
    assert len(ids) == 2
    done = {job.id for job in kit.drain()}  # the first, and the first of the batch
    kit.advance(3600)
    done |= {job.id for job in kit.drain()}  # the scheduled, delayed and batch ones
    assert set(ids) <= done
    busy = mail.enqueue(namespace["Mail"](to="busy@example.com"))
    slow = mail.enqueue(namespace["Mail"](to="slow@example.com"))
    bad = mail.enqueue(namespace["Mail"](to="x@example.invalid"))
    kit.drain()
    assert kit.get(bad).error == "bad_address"
    assert (kit.get(busy).status, kit.get(slow).status) == ("queued", "queued")
    kit.advance(datetime.timedelta(minutes=10).total_seconds())
    kit.drain()
    assert kit.get(busy).status == "succeeded"  # its second attempt
    detail = kit.runner.detail(slow)
    assert (detail.attempt, detail.waiting[0].startswith("due at")) == (0, True)  # snoozes for good


def test_the_docs_example_test_passes_against_the_docs_kind(myapp_jobs):
    namespace: dict = {}
    source = examples()["myapp/test_jobs.py"]
    exec(compile(source, "docs:myapp/test_jobs.py", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


def test_the_docs_kind_publishes_progress(myapp_jobs):
    from jobtable.adapters.testkit import JobTestKit

    kit = JobTestKit()
    counts = myapp_jobs.register(kit.kinds)
    job_id = counts.enqueue(myapp_jobs.CountPayload(steps=3))
    assert kit.drain()[0].id == job_id
    row = kit.store.row(job_id)
    assert "secret_note" not in row["result"]


def test_the_docs_limits_example_holds_a_second_charge_of_one_customer_back():
    from jobtable import JobTestKit

    module = types.ModuleType("myapp_limits")
    exec(compile(examples()["myapp/limits.py"], "docs:myapp/limits.py", "exec"), module.__dict__)
    kit = JobTestKit()
    module.register(kit.kinds)
    first = kit.runner.enqueue("charge", {"customer_id": "c1", "cents": 5})
    second = kit.runner.enqueue("charge", {"customer_id": "c1", "cents": 7})
    other = kit.runner.enqueue("charge", {"customer_id": "c2", "cents": 9})
    assert kit.store.row(first)["limit_key"] == "c1"
    assert kit.store.row(other)["limit_key"] == "c2"
    assert {job.id for job in kit.drain()} == {first, second, other}


def test_the_docs_tracing_example_prints_each_jobs_spans(tmp_path):
    """``myapp/tracing.py`` as written, in a process of its own (the provider is global)."""
    checkout = a_checkout_with_the_doc_examples(tmp_path / "jobtable")
    script = (
        "import myapp.tracing\n"
        "from opentelemetry import trace\n"
        "from jobtable import JobTestKit\n"
        "import myapp.jobs\n"
        "kit = JobTestKit()\n"
        "myapp.jobs.register(kit.kinds)\n"
        "kit.runner.enqueue('count', {'steps': 2})\n"
        "assert [job.status.value for job in kit.drain()] == ['succeeded']\n"
        "trace.get_tracer_provider().force_flush()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=checkout, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"name": "send count"' in done.stdout and '"name": "process count"' in done.stdout


def run_example(name: str, folder: Path, script: str = "", env: dict | None = None):
    """``myapp/NAME`` as written, imported in a fresh process in ``folder`` (beside the docs'
    ``myapp/jobs.py``), then ``script``."""
    (folder / "myapp").mkdir(exist_ok=True)
    (folder / "myapp" / "__init__.py").write_text("")
    for file in ("myapp/jobs.py", name):
        (folder / file).write_text(examples()[file])
    module = name.removesuffix(".py").replace("/", ".")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("JOBTABLE_")}
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}\n{script}"], cwd=folder,
        env={**environment, **(env or {})}, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def jobs_in(database: Path) -> list[tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT kind, status FROM jobs ORDER BY id").fetchall()


def test_the_embedding_example_runs_jobs_in_the_applications_own_process(tmp_path):
    done = run_example("myapp/embed.py", tmp_path)
    assert done.stdout.splitlines() == ["{'done': 5}"]  # what wait returned
    first, second = jobs_in(tmp_path / "jobtable.db")
    assert first == ("count", "succeeded")
    assert second[0] == "count"  # stored; the shutdown let it finish if it had started


def test_the_enqueue_only_example_waits_for_a_worker_elsewhere(tmp_path):
    from jobtable import Runner, SqliteStore, SystemClock

    clock = SystemClock()
    store = SqliteStore.open(str(tmp_path / "jobtable.db"), now=clock.now())
    worker = Runner(store, clock, workers=1)
    namespace: dict = {}
    exec(compile(examples()["myapp/jobs.py"], "docs:myapp/jobs.py", "exec"), namespace)
    namespace["register"](worker.kinds)
    worker.start()
    try:
        done = run_example("myapp/enqueue_only.py", tmp_path)
    finally:
        worker.shutdown(grace=10)
        store.close()
    assert done.stdout.splitlines()[-1] == "succeeded {'done': 5}"  # follow's last version
    assert jobs_in(tmp_path / "jobtable.db") == [("count", "succeeded")]


def test_the_wsgi_example_serves_its_route_and_jobtables_api_side_by_side(tmp_path):
    script = (
        "import time\n"
        "import falcon.testing\n"
        "client = falcon.testing.TestClient(myapp.wsgi.application)\n"
        "answer = client.simulate_post('/count')\n"
        "assert answer.status_code == 202, answer.text\n"
        "auth = {'Authorization': 'Bearer t0ken-for-the-test'}\n"
        "url = '/api/v1/jobs/' + answer.json['id']\n"
        "deadline = time.monotonic() + 60\n"
        "while client.simulate_get(url, headers=auth).json['status'] != 'succeeded':\n"
        "    assert time.monotonic() < deadline, 'the job never finished'\n"
        "    time.sleep(0.02)\n"
        "assert client.simulate_get(url).status_code == 401\n"
        "assert client.simulate_get('/elsewhere').status_code == 404\n"
        "print(client.simulate_get(url, headers=auth).text)\n"
    )
    done = run_example(
        "myapp/wsgi.py", tmp_path, script,
        env={"MYAPP_JOBS_TOKEN": "t0ken-for-the-test",
             "MYAPP_JOBS_DATABASE": str(tmp_path / "jobs.db")},
    )  # fmt: skip
    assert '"status":"succeeded","result":{"done":3}' in done.stdout
    assert jobs_in(tmp_path / "jobs.db") == [("count", "succeeded")]
