"""Liveness locks for SQLite: one OS file lock per runner, held for as long as it lives.

A runner holds ``flock(LOCK_EX)`` on ``<database>.runners/<runner id>.lock``.
The kernel drops the lock when the process dies, however it dies, so any
other process can tell a live owner (the lock is taken) from a dead one (it
can take the lock itself). ``flock`` locks belong to an open file, not to a
process, so a check from the owner's own process also sees it held.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading

_SAFE_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


class LivenessLocks:
    def __init__(self, database_path: str) -> None:
        self._folder = database_path + ".runners"
        self._guard = threading.Lock()
        self._held: dict[str, int] = {}

    def _path(self, runner_id: str) -> str | None:
        if not _SAFE_ID.fullmatch(runner_id):
            return None
        return os.path.join(self._folder, f"{runner_id}.lock")

    def hold(self, runner_id: str) -> None:
        path = self._path(runner_id)
        if path is None:
            raise ValueError("a runner id is letters, digits, '-' and '_'")
        if self._still_held(runner_id, path):
            return
        os.makedirs(self._folder, mode=0o700, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            raise
        with self._guard:
            self._held[runner_id] = descriptor

    def _still_held(self, runner_id: str, path: str) -> bool:
        """True when our locked descriptor is still the file at ``path`` (not removed since)."""
        with self._guard:
            descriptor = self._held.get(runner_id)
        if descriptor is None:
            return False
        try:
            on_disk = os.stat(path)
        except FileNotFoundError:
            on_disk = None
        mine = os.fstat(descriptor)
        if on_disk is not None and (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino):
            return True
        with self._guard:
            self._held.pop(runner_id, None)
        os.close(descriptor)  # the file was removed: lock a new one in its place
        return False

    def release(self, runner_id: str) -> None:
        with self._guard:
            descriptor = self._held.pop(runner_id, None)
        if descriptor is None:
            return
        path = self._path(runner_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        os.close(descriptor)  # closing the file drops the lock

    def release_all(self) -> None:
        with self._guard:
            held = list(self._held)
        for runner_id in held:
            self.release(runner_id)

    def is_alive(self, runner_id: str | None) -> bool:
        """True while some process holds ``runner_id``'s lock."""
        if runner_id is None:
            return False
        path = self._path(runner_id)
        if path is None:
            return False
        try:
            descriptor = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(descriptor)  # also drops the lock if we just took it
        return False
