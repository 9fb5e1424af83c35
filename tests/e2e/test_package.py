"""The built wheel, installed into a fresh virtual environment inside an application's project.

The project has its own ``core`` and ``adapters`` packages (as a Django
project's ``core`` app): jobtable must import as ``jobtable`` only, never
shadow them, carry its SQL files and ``py.typed``, and run the docs'
example kind from the project's folder with a bare ``--kinds myapp.jobs``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.conftest import wait_until
from tests.integration.test_doc_examples import examples
from tests.support.repository import copy_of_the_repository

pytestmark = pytest.mark.e2e


def run(*argv: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    source = copy_of_the_repository(tmp_path_factory.mktemp("source"))  # builds write beside it
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(source),
                cwd=out)  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (found,) = out.glob("jobtable-*.whl")
    return found


@pytest.fixture(scope="module")
def project(tmp_path_factory, wheel) -> Path:
    """An application's folder: its own core and adapters, Get started's kind, a fresh venv."""
    root = tmp_path_factory.mktemp("app")
    (root / "core").mkdir()
    (root / "core" / "__init__.py").write_text('WHOSE = "the application\'s own core"\n')
    (root / "adapters").mkdir()
    (root / "adapters" / "__init__.py").write_text('WHOSE = "the application\'s own adapters"\n')
    (root / "myapp").mkdir()
    (root / "myapp" / "__init__.py").write_text("")
    (root / "myapp" / "jobs.py").write_text(examples()["myapp/jobs.py"])
    (root / "test_myapp_jobs.py").write_text(examples()["myapp/test_jobs.py"])
    made = run(sys.executable, "-m", "venv", str(root / "venv"), cwd=root)
    assert made.returncode == 0, made.stderr
    installed = run(str(root / "venv/bin/pip"), "install", "--quiet", str(wheel), cwd=root)
    assert installed.returncode == 0, installed.stderr[-2000:]
    return root


def test_the_wheel_holds_one_package_with_its_sql_and_type_marker(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names if not name.startswith("jobtable-")}
    assert tops == {"jobtable"}
    assert "jobtable/py.typed" in names
    assert "jobtable/migrations/sqlite/0003_runners.sql" in names
    assert "jobtable/adapters/postgres/queries/claim_next_job.sql" in names
    assert "jobtable/adapters/sql/queries/create_job.sql" in names


def test_jobtable_imports_beside_an_applications_own_core_and_adapters(project):
    check = textwrap.dedent("""
        import core, adapters, jobtable
        from jobtable import Failure, JobContext, Runner, SqliteStore, SystemClock, __all__
        assert core.WHOSE == "the application's own core", core.WHOSE
        assert adapters.WHOSE == "the application's own adapters"
        assert all(hasattr(jobtable, name) for name in __all__ if name != "PostgresStore")
        try:
            jobtable.PostgresStore  # psycopg is an extra: jobtable[postgres]
        except ImportError as error:
            assert "pip install 'jobtable[postgres]'" in str(error), error
        print(jobtable.__version__)
    """)
    result = run(str(project / "venv/bin/python"), "-c", check, cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0.1.0"


def test_the_readme_example_test_passes_in_the_application(project):
    code = "import test_myapp_jobs as t\nt.test_count_shows_its_result()\nt.test_count_refuses_too_many_steps()\n"
    result = run(str(project / "venv/bin/python"), "-c", code, cwd=project)
    assert result.returncode == 0, result.stderr


def test_the_readme_kind_runs_from_the_projects_folder_with_a_bare_kinds_module(project):
    jobtable = str(project / "venv/bin/jobtable")
    assert run(jobtable, "migrate", "--database", "jobs.db", cwd=project).returncode == 0
    log = (project / "worker.log").open("w")
    worker = subprocess.Popen(
        [jobtable, "worker", "--database", "jobs.db", "--kinds", "myapp.jobs"],
        cwd=project, stderr=log, stdout=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    try:
        wait_until(lambda: "worker: database=jobs.db" in (project / "worker.log").read_text(),
                   within=60, what="the worker starting")  # fmt: skip
        done = run(jobtable, "enqueue", "count", '{"steps": 3}', "--kinds", "myapp.jobs",
                   "--database", "jobs.db", "--wait", cwd=project, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        final = json.loads(done.stdout.strip().splitlines()[-1])
        assert (final["status"], final["result"]) == ("succeeded", {"done": 3})
        started = (project / "worker.log").read_text()
        assert "kinds=count,noop" in started and "workers=2" in started
    finally:
        worker.terminate()
        worker.wait(30)
