"""The README's example kind and example test run as written, so the README stays true."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLE = re.compile(r"<!-- readme-example: (\S+) -->\n```python\n(.*?)```", re.DOTALL)


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall(README.read_text(encoding="utf-8")))


@pytest.fixture
def myapp_jobs(monkeypatch):
    source = examples()["myapp/jobs.py"]
    package = types.ModuleType("myapp")
    package.__path__ = []
    module = types.ModuleType("myapp.jobs")
    monkeypatch.setitem(sys.modules, "myapp", package)
    monkeypatch.setitem(sys.modules, "myapp.jobs", module)
    exec(compile(source, "README.md:myapp/jobs.py", "exec"), module.__dict__)
    return module


def test_the_readme_has_its_examples():
    assert set(examples()) == {"myapp/jobs.py", "tests/test_myapp_jobs.py", "myapp/lifecycle.py"}


def test_the_readme_lifecycle_example_runs_as_written():
    import datetime

    from jobtable.adapters.testkit import JobTestKit

    namespace: dict = {}
    source = examples()["myapp/lifecycle.py"]
    exec(compile(source, "README.md:myapp/lifecycle.py", "exec"), namespace)
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
    detail, waiting = kit.runner.detail(slow)
    assert (detail.attempt, waiting[0].startswith("due at")) == (0, True)  # snoozes for good


def test_the_readme_example_test_passes_against_the_readme_kind(myapp_jobs):
    namespace: dict = {}
    source = examples()["tests/test_myapp_jobs.py"]
    exec(compile(source, "README.md:tests/test_myapp_jobs.py", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


def test_the_readme_kind_publishes_progress(myapp_jobs):
    from jobtable.adapters.testkit import JobTestKit

    kit = JobTestKit()
    counts = myapp_jobs.register(kit.kinds)
    job_id = counts.enqueue(myapp_jobs.CountPayload(steps=3))
    assert kit.drain()[0].id == job_id
    row = kit.store.row(job_id)
    assert "secret_note" not in row["result"]
