"""Wait for writes to a SQLite database's files, without polling: Linux inotify.

A commit by any process writes the ``-wal`` file (or the database file), and
the kernel reports it on a watch of their folder. The watcher thread sleeps
in ``poll`` until then, so an idle process costs nothing and another
process's enqueue is noticed in well under a millisecond. Where inotify is
not available, ``FileEvents.open`` returns None and the caller polls.

``poll`` rather than ``select``: ``select`` refuses descriptor numbers of
1024 and above, which a busy process (many connections, files, sockets)
easily hands out.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import math
import os
import select
import struct

_IN_MODIFY = 0x00000002
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_CLOEXEC = 0o2000000
_EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)
_BROKEN = select.POLLERR | select.POLLHUP | select.POLLNVAL
"""Poll results that no read will clear: waiting again would return at once, forever."""


class FileEvents:
    """An inotify descriptor watching one folder, and a pipe to interrupt a wait on it."""

    def __init__(self, inotify_fd: int, names: frozenset[str]) -> None:
        self._fd = inotify_fd
        self._names = names
        self._wake_read, self._wake_write = os.pipe()
        # A full pipe already holds a pending wake: interrupt() must never block stop().
        os.set_blocking(self._wake_write, False)
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)
        self._poll.register(self._wake_read, select.POLLIN)
        self._closed = False

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
        try:
            return cls(descriptor, frozenset({base, f"{base}-wal"}))
        except OSError:  # out of descriptors for the pipe, say: the caller polls instead
            os.close(descriptor)
            return None

    def fileno(self) -> int:
        """The inotify descriptor, for diagnostics and tests."""
        return self._fd

    def wait(self, timeout: float) -> bool:
        """Block until the database's files are written, ``interrupt()`` or ``timeout``.

        Returns True when a write was seen. Every pending event is read, so a
        burst of writes wakes the caller once. Raises OSError when a
        descriptor is broken, rather than returning at once on every call.
        """
        ready = dict(self._poll.poll(_milliseconds(timeout)))
        if any(flags & _BROKEN for flags in ready.values()):
            raise OSError(errno.EBADF, "inotify or wake descriptor is broken")
        if ready.get(self._wake_read, 0) & select.POLLIN:
            os.read(self._wake_read, 512)
        return bool(ready.get(self._fd, 0) & select.POLLIN) and self._drain()

    def interrupt(self) -> None:
        """Make the current (or next) ``wait`` return at once."""
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_write, b"x")

    def close(self) -> None:
        """Release the inotify descriptor and the pipe; a second call does nothing.

        Linux releases a descriptor even when ``close`` reports an error, so
        an error here is ignored: there is nothing left to retry.
        """
        if self._closed:
            return
        self._closed = True
        for descriptor in (self._fd, self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
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


def _milliseconds(timeout: float) -> int:
    """``poll`` counts whole milliseconds: round up, so a short wait never spins at 0."""
    return max(0, math.ceil(timeout * 1000))
