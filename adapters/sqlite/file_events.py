"""Wait for writes to a SQLite database's files, without polling: Linux inotify.

A commit by any process writes the ``-wal`` file (or the database file), and
the kernel reports it on a watch of their folder. The watcher thread sleeps
in ``select`` until then, so an idle process costs nothing and another
process's enqueue is noticed in well under a millisecond. Where inotify is
not available, ``FileEvents.open`` returns None and the caller polls.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct

_IN_MODIFY = 0x00000002
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_CLOEXEC = 0o2000000
_EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


class FileEvents:
    def __init__(self, inotify_fd: int, names: frozenset[str]) -> None:
        self._fd = inotify_fd
        self._names = names
        self._wake_read, self._wake_write = os.pipe()

    @classmethod
    def open(cls, database_path: str) -> FileEvents | None:
        """Watch the database's folder; None when inotify cannot be used here."""
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            init, add_watch = libc.inotify_init1, libc.inotify_add_watch
        except (OSError, AttributeError):
            return None
        folder = os.path.dirname(os.path.abspath(database_path))
        descriptor = init(_IN_CLOEXEC)
        if descriptor < 0:
            return None
        if add_watch(descriptor, folder.encode(), _IN_MODIFY | _IN_CREATE | _IN_MOVED_TO) < 0:
            os.close(descriptor)
            return None
        base = os.path.basename(database_path)
        return cls(descriptor, frozenset({base, f"{base}-wal"}))

    def wait(self, timeout: float) -> bool:
        """Block until the database's files are written, ``interrupt()`` or ``timeout``.

        Returns True when a write was seen. Every pending event is read, so a
        burst of writes wakes the caller once.
        """
        ready, _, _ = select.select([self._fd, self._wake_read], [], [], timeout)
        if self._wake_read in ready:
            os.read(self._wake_read, 512)
        return self._fd in ready and self._drain()

    def interrupt(self) -> None:
        os.write(self._wake_write, b"x")

    def close(self) -> None:
        for descriptor in (self._fd, self._wake_read, self._wake_write):
            os.close(descriptor)

    def _drain(self) -> bool:
        seen = False
        data = os.read(self._fd, 65536)
        offset = 0
        while offset + _EVENT_HEADER.size <= len(data):
            _, _, _, length = _EVENT_HEADER.unpack_from(data, offset)
            start = offset + _EVENT_HEADER.size
            name = data[start : start + length].split(b"\0", 1)[0].decode(errors="replace")
            seen = seen or name in self._names
            offset = start + length
        return seen
