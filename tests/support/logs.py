"""Capture one logger's lines in a test, isolated from every other test's logger."""

from __future__ import annotations

import logging
import threading
import uuid


class LogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self._lines: list[str] = []
        self._guard = threading.Lock()
        self.logger = logging.getLogger(f"jobtable.test.{uuid.uuid4().hex}")
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        line = f"{record.levelname} {record.getMessage()}"
        if record.exc_info:
            line += "\n" + logging.Formatter().formatException(record.exc_info)
        with self._guard:
            self._lines.append(line)

    @property
    def text(self) -> str:
        with self._guard:
            return "\n".join(self._lines)

    def lines(self) -> list[str]:
        with self._guard:
            return list(self._lines)
