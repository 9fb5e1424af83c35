"""The documentation site builds strictly, says what each code block is, and covers the code.

The reference pages are written by ``scripts/docs_hooks.py`` from the parser, the settings
and the OpenAPI document; these tests check that what they write covers every command,
flag, variable, public name and error code, and that the deployment guide's systemd
units pass ``systemd-analyze verify`` as written.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs import blocks, pages, unmarked
from tests.support.repository import REPO

sys.path.insert(0, str(REPO / "scripts"))
import docs_hooks

README = REPO / "README.md"


def operation_ids() -> list[str]:
    from jobtable.entrypoints.http.openapi import openapi_document

    paths = openapi_document("test")["paths"].values()
    ids = [op["operationId"] for item in paths for op in item.values() if "operationId" in op]
    assert len(ids) > 15
    return ids


def text_of(page: Path) -> str:
    """A built page's text, its markup (and the highlighter's) taken out."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_the_site_builds_with_no_warning(tmp_path):
    mkdocs = str(Path(sys.executable).with_name("mkdocs"))
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=REPO,
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert 'not included in the "nav"' not in done.stderr, done.stderr  # every page reachable
    built = tmp_path / "site"
    assert (built / "reference" / "openapi.json").is_file()
    started = text_of(built / "get-started" / "index.html")
    assert "jobtable serve --kinds jobtable.core.demo" in started  # the README's tour, included
    assert "JOBTABLE_SQLITE_BUSY_TIMEOUT" in text_of(built / "reference" / "cli" / "index.html")
    http_page = (built / "reference" / "http" / "index.html").read_text(encoding="utf-8")
    for operation_id in operation_ids():  # each operation written once, under its tag
        assert len(re.findall(rf'<h3 id="{operation_id.lower()}"', http_page)) == 1, operation_id
    configuration = text_of(built / "reference" / "configuration" / "index.html")
    from jobtable.entrypoints.config import SETTINGS

    assert [s.env for s in SETTINGS.values() if s.env not in configuration] == []
    python = text_of(built / "reference" / "python" / "index.html")
    assert "The job once it has finished" in python  # docstrings rendered, not bare names


def test_every_code_block_says_what_the_tests_do_with_it():
    assert unmarked() == []
    assert {"quickstart", "countdown", "http"} <= set(blocks("shell"))


def test_the_readme_is_short_and_starts_with_its_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    first_screen = "\n".join(text.splitlines()[:60])
    assert blocks("shell")["quickstart"].strip() in first_screen
    assert "./scripts/test" in first_screen


def test_every_link_from_the_readme_into_the_site_resolves():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert len(targets) > 20
    for target in targets:
        assert (REPO / target).is_file(), target
    linked = {REPO / target for target in targets}
    missing = [
        page
        for page in pages()[1:]
        if page not in linked and page.relative_to(REPO).parts[1] != "design"
    ]
    assert missing == [], "every guide and reference page is linked from the README"


def commands() -> dict[str, argparse.ArgumentParser]:
    return docs_hooks._commands(docs_hooks._parser())


def test_the_cli_reference_has_every_command_and_flag():
    written = docs_hooks.cli()
    for name, command in commands().items():
        (section,) = re.findall(rf"^## `jobtable {name}`\n(.*?)(?=^## |\Z)", written, re.M | re.S)
        rows = [line for line in section.splitlines() if line.startswith("| `")]
        for action in command._actions:
            if action.dest == "help":
                continue
            first = action.option_strings[0] if action.option_strings else action.metavar
            assert sum(row.startswith(f"| `{first}") for row in rows) == 1, (name, first)


def test_each_flags_variable_in_the_reference_is_the_one_that_sets_it(monkeypatch):
    """Every variable exported with a value of its own: a flag's default must be its
    documented variable's value, and a flag documented without one must take none."""
    from jobtable.entrypoints.config import SETTINGS

    for setting in SETTINGS.values():
        monkeypatch.setenv(setting.env, f"from {setting.env}")
    from jobtable.entrypoints.cli import build_parser

    exported = docs_hooks._commands(build_parser())
    checked = 0
    for name, command in commands().items():
        for documented, action in zip(command._actions, exported[name]._actions, strict=True):
            if not documented.option_strings or documented.dest == "help":
                continue
            setting = docs_hooks.setting_of(documented)
            wanted = f"from {setting.env}" if setting else None
            got = action.default if str(action.default).startswith("from ") else None
            assert got == wanted, (name, documented.option_strings)
            checked += 1
    assert checked > 80


def test_the_configuration_reference_has_every_variable_the_code_reads():
    written = docs_hooks.variables()
    source = "".join(
        path.read_text(encoding="utf-8")
        for folder in ("core", "adapters", "entrypoints", "contrib")
        for path in (REPO / folder).rglob("*.py")
    )
    read = set(re.findall(r"\bJOBTABLE_[A-Z0-9_]+\b", source))
    assert len(read) > 30
    assert {variable for variable in read if f"`{variable}`" not in written} == set()


def test_the_python_reference_documents_every_public_name():
    import jobtable

    page = (REPO / "docs" / "reference" / "python.md").read_text(encoding="utf-8")
    documented = {line.rsplit(".", 1)[1] for line in re.findall(r"^::: (\S+)$", page, re.M)}
    constants = {name for name in jobtable.__all__ if name.isupper() or name.startswith("__")}
    assert set(jobtable.__all__) - constants - documented == set()
    assert all(name in page for name in constants)


def test_the_error_codes_page_lists_every_code_the_api_answers_with():
    from jobtable.core import codes
    from jobtable.entrypoints.http.openapi import openapi_document

    document = openapi_document("test")
    error = document["components"]["schemas"]["Error"]["properties"]["error"]
    page = (REPO / "docs" / "reference" / "errors.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([a-z_ ]+)` \| (?:\d{3}|`jobtable)", page, re.M))
    assert listed == set(error["properties"]["code"]["enum"]) | {"forbidden"} | set(
        codes.RESERVED_CODES
    )


def units() -> dict[str, str]:
    return blocks("unit")


def test_the_environment_file_sets_only_variables_jobtable_reads():
    from jobtable.entrypoints.config import SETTINGS
    from jobtable.entrypoints.wiring import TOKEN_ENV

    known = {setting.env for setting in SETTINGS.values()} | {TOKEN_ENV}
    lines = [line for line in units()["jobtable.env"].splitlines() if line and line[0] != "#"]
    assert lines and {line.split("=", 1)[0] for line in lines} <= known


@pytest.mark.parametrize(
    "name", sorted(name for name in blocks("unit") if name.endswith(".service"))
)
def test_each_systemd_unit_passes_systemd_analyze_verify(name, tmp_path):
    from jobtable.entrypoints.cli import build_parser

    unit = units()[name]
    (command,) = re.findall(r"^ExecStart=(.+)$", unit, re.M)
    argv = shlex.split(command)
    assert argv[0] == "/srv/myapp/.venv/bin/jobtable"
    build_parser().parse_args(argv[1:])  # exits 2 on a flag jobtable does not have
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("CI"):
            pytest.fail("systemd-analyze is missing (Debian's systemd package has it)")
        pytest.skip("systemd-analyze is not installed here")
    jobtable = str(Path(sys.executable).with_name("jobtable"))
    (tmp_path / name).write_text(unit.replace("/srv/myapp/.venv/bin/jobtable", jobtable))
    done = subprocess.run(
        [analyze, "verify", str(tmp_path / name)], capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert name not in done.stdout + done.stderr, done.stdout + done.stderr  # no warning
