"""Lists for people and for programs: an aligned table on a terminal, JSON lines when piped.

The JSON lines are the items the HTTP API lists, one a line, so ``jobtable
queues | jq`` sees what ``GET /api/v1/queues`` would give.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

Column = tuple[str, Callable[[dict[str, Any]], object]]
"""A heading and how to read its cell from an item."""


def write(
    items: Sequence[dict[str, Any]],
    columns: Sequence[Column],
    *,
    out: IO[str] | None = None,
    table: bool | None = None,
) -> None:
    """``items`` as a table when ``out`` is a terminal (or ``table``), else as JSON lines."""
    out = sys.stdout if out is None else out
    if not (out.isatty() if table is None else table):
        for item in items:
            out.write(json.dumps(item) + "\n")
        return
    rows = [[heading for heading, _ in columns]]
    rows += [[_cell(read(item)) for _, read in columns] for item in items]
    widths = [max(len(row[index]) for row in rows) for index in range(len(columns))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        out.write("  ".join(cells).rstrip() + "\n")


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ",".join(str(part) for part in value) or "-"
    return str(value)
