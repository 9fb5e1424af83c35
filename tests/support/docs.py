"""The code blocks of the README and the docs site, found by the comment above each.

Every fenced block says what the tests do with it, in an HTML comment on the line before:

- ``<!-- example: myapp/jobs.py -->``: a Python file a user writes; tests run it.
- ``<!-- shell: name -->``: commands a user pastes; tests/e2e/test_doc_shell.py runs them.
- ``<!-- unit: name.service -->``: a systemd unit; ``systemd-analyze verify`` checks it.
- ``<!-- output -->``: what a command prints or a log holds, shown, not run.
- ``<!-- not run: why -->``: a block no test can run here, and why.

tests/integration/test_docs_site.py fails on a block with none of them. Fences are read
as CommonMark reads them: backticks or tildes, three or more, indented (in a list) or not,
closed by a fence of the same character at least as long.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from tests.support.repository import REPO

OPENING = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARK = re.compile(r"<!-- (?:(example|shell|unit): (\S+)|(output)|(not run): [^>]+) -->")


@attrs.frozen
class Block:
    page: Path
    line: int
    """The opening fence's line, from 1."""
    mark: str | None
    """example, shell, unit, output, not run; None when the line before says nothing."""
    name: str | None
    text: str


def pages() -> list[Path]:
    """The README and every page of the site."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def read_blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found, number = [], 0
    while number < len(lines):
        opening = OPENING.match(lines[number])
        if not opening or (opening["fence"][0] == "`" and "`" in opening["info"]):
            number += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}} *$")
        end = next(
            (at for at in range(number + 1, len(lines)) if closing.match(lines[at])), len(lines)
        )
        body = "\n".join(_unindented(line, indent) for line in lines[number + 1 : end])
        mark = MARK.fullmatch(lines[number - 1].strip()) if number else None
        kind = (mark[1] or mark[3] or mark[4]) if mark else None
        name = mark[2] if mark else None
        found.append(Block(page, number + 1, kind, name, body + "\n" if body else ""))
        number = end + 1
    return found


def _unindented(line: str, indent: int) -> str:
    """A line of a block whose fence is indented by ``indent`` (in a list), as CommonMark
    reads it: up to that many leading spaces taken off."""
    return line[min(indent, len(line) - len(line.lstrip(" "))) :]


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in read_blocks(page)]


def blocks(what: str) -> dict[str, str]:
    """Name: text of every block marked ``what`` (example, shell or unit), on any page.
    ValueError for a name used twice."""
    found: dict[str, str] = {}
    for block in all_blocks():
        if block.mark != what:
            continue
        if block.name in found:
            raise ValueError(f"{what} {block.name} is written twice ({block.page.name} too)")
        found[str(block.name)] = block.text
    return found


def page_of(what: str, name: str) -> str:
    """The text of the page that holds the block."""
    for block in all_blocks():
        if (block.mark, block.name) == (what, name):
            return block.page.read_text(encoding="utf-8")
    raise LookupError(f"no page holds {what} {name}")


def unmarked() -> list[str]:
    """Page:line of every block with no mark on the line before its opening fence."""
    return [
        f"{block.page.relative_to(REPO)}:{block.line}" for block in all_blocks() if not block.mark
    ]
