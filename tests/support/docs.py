"""The code blocks of the README and the docs site, found by the comment above each.

Every fenced block says what the tests do with it, in an HTML comment on the line before:

- ``<!-- example: myapp/jobs.py -->``: a Python file a user writes; tests run it.
- ``<!-- shell: name -->``: commands a user pastes; tests/e2e/test_doc_shell.py runs them.
- ``<!-- unit: name.service -->``: a systemd unit; ``systemd-analyze verify`` checks it.
- ``<!-- output -->``: what a command prints or a log holds, shown, not run.
- ``<!-- not run: why -->``: a block no test can run here, and why.

tests/integration/test_docs_site.py fails on a block with none of them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.repository import REPO

MARKED = re.compile(r"<!-- (example|shell|unit): (\S+) -->\n```[a-z]*\n(.*?)```", re.DOTALL)
FENCE = re.compile(r"^(?P<before>.*)\n```[a-z]+\n", re.MULTILINE)
ANY_MARK = re.compile(r"<!-- (example: \S+|shell: \S+|unit: \S+|output|not run: [^>]+) -->$")


def pages() -> list[Path]:
    """The README and every page of the site."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(what: str) -> dict[str, str]:
    """Name: text of every block marked ``what`` (example, shell or unit), on any page.
    ValueError for a name used twice."""
    found: dict[str, str] = {}
    for page in pages():
        for mark, name, text in MARKED.findall(page.read_text(encoding="utf-8")):
            if mark != what:
                continue
            if name in found:
                raise ValueError(f"{what} {name} is written twice ({page.name} too)")
            found[name] = text
    return found


def page_of(what: str, name: str) -> str:
    """The text of the page that holds the block."""
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if f"<!-- {what}: {name} -->" in text:
            return text
    raise LookupError(f"no page holds {what} {name}")


def unmarked() -> list[str]:
    """Page:line of every opening fence with no mark on the line before."""
    missing = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        inside = False
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if not line.startswith("```"):
                continue
            if not inside and not ANY_MARK.fullmatch(lines[number - 1].strip()):
                missing.append(f"{page.relative_to(REPO)}:{number + 1}")
            inside = not inside
    return missing
