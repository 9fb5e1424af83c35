"""Liveness locks for SQLite: one OS file lock per runner, held for as long as it lives.

A runner holds ``flock(LOCK_EX)`` on ``<database>.runners/<runner id>.lock``.
The kernel drops the lock when the process dies, however it dies, so any
other process can tell a live owner (the lock is taken) from a dead one (it
can take the lock itself). ``flock`` locks belong to an open file, not to a
process, so a check from the owner's own process also sees it held.

Two things can take a live runner's lock from under it, and both are handled:

- the folder is removed (``git clean -X``, a tidy-up script): the owner's
  regular check sees that its locked file is no longer the one at the path
  and locks a new one in its place;
- the process forks (a handler using ``multiprocessing``): the child closes
  the descriptors it inherited, so a dead parent is not kept "alive" by its
  child, and forgets them, so the child closing its store cannot delete the
  parent's lock files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
import weakref
from collections.abc import Iterator

_SAFE_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")

_instances: weakref.WeakSet[LivenessLocks] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for locks in list(_instances):
        locks.forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class LivenessLocks:
    def __init__(self, database_path: str) -> None:
        self._folder = database_path + ".runners"
        self._guard = threading.Lock()
        self._held: dict[str, int] = {}
        _instances.add(self)

    def _path(self, runner_id: str) -> str | None:
        if not _SAFE_ID.fullmatch(runner_id):
            return None
        return os.path.join(self._folder, f"{runner_id}.lock")

    def hold(self, runner_id: str) -> None:
        """Take ``runner_id``'s lock, or keep it if this process holds it already.

        OSError when the folder or file cannot be made or locked.
        """
        path = self._path(runner_id)
        if path is None:
            raise ValueError("a runner id is letters, digits, '-' and '_'")
        with self._guard:
            descriptor = self._held.get(runner_id)
        if descriptor is not None and _same_file(descriptor, path):
            return
        os.makedirs(self._folder, mode=0o700, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            raise
        with self._guard:
            previous = self._held.pop(runner_id, None)
            self._held[runner_id] = descriptor
        if previous is not None:
            os.close(previous)

    def confirm(self, runner_id: str) -> bool:
        """True when the lock is still held; False when it was lost and is taken again now.

        Cheap (two ``stat`` calls, no database): the owner calls it several
        times a second. Raises OSError when a lost lock cannot be taken again.
        """
        path = self._path(runner_id)
        if path is None:
            raise ValueError("a runner id is letters, digits, '-' and '_'")
        with self._guard:
            descriptor = self._held.get(runner_id)
        if descriptor is not None and _same_file(descriptor, path):
            return True
        self.hold(runner_id)  # the file was removed: lock a new one in its place
        return False

    def release(self, runner_id: str) -> None:
        with self._guard:
            descriptor = self._held.pop(runner_id, None)
        if descriptor is None:
            return
        path = self._path(runner_id)
        if path is not None and _same_file(descriptor, path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        os.close(descriptor)  # closing the file drops the lock

    def release_all(self) -> None:
        with self._guard:
            held = list(self._held)
        for runner_id in held:
            self.release(runner_id)

    def forget_after_fork(self) -> None:
        """In a forked child: let go of the inherited descriptors without touching the files."""
        self._guard = threading.Lock()  # another thread may have held it at the fork
        held, self._held = self._held, {}
        for descriptor in held.values():
            with contextlib.suppress(OSError):
                os.close(descriptor)  # the parent's descriptor keeps its lock

    @contextlib.contextmanager
    def holding_if_dead(self, runner_id: str | None) -> Iterator[bool]:
        """Take a runner's lock for as long as the block runs, if nobody holds it: True then.

        For settling a dead runner's jobs: an owner that comes back meanwhile
        waits for the lock until the settling has committed, so its check of
        which jobs are still its own comes after. The file is removed after.
        """
        path = None if runner_id is None else self._path(runner_id)
        if path is None:
            yield True  # no owner recorded: no lock could exist
            return
        os.makedirs(self._folder, mode=0o700, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False  # alive: someone holds it
                return
            yield True
            if _same_file(descriptor, path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)  # a dead runner's file: nobody will lock it again
        finally:
            os.close(descriptor)

    def is_alive(self, runner_id: str | None) -> bool:
        """True while some process holds ``runner_id``'s lock."""
        if runner_id is None:
            return False
        path = self._path(runner_id)
        if path is None:
            return False
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(descriptor)  # also drops the lock if we just took it
        return False


def _same_file(descriptor: int, path: str) -> bool:
    """Whether the open ``descriptor`` is still the file at ``path`` (not removed since)."""
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(descriptor)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)
