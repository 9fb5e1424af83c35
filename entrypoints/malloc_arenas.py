"""Fewer glibc malloc arenas for a long-running process with many threads.

glibc gives threads malloc arenas of their own (up to eight per core), and
memory freed in one stays mapped there: a server whose worker and request
threads allocate in turn grows its resident set for hours while it holds no
more objects. Measured in ``jobtable serve`` (bench/serve_memory.py): RSS
+25% from 100,000 to 1,000,000 jobs, with the Python heap (tracemalloc) and
SQLite's own memory flat; with two arenas, +1% over the same span.
``MALLOC_ARENA_MAX=2`` is the usual cure for threaded Python servers; this
applies it from inside the process, before any thread starts, unless the
environment already chose a number. Where the C library is not glibc it
does nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_ARENA_MAX = -8
"""glibc's mallopt parameter for the most arenas (malloc.h)."""

ARENAS = 2


def limit_malloc_arenas() -> bool:
    """Cap glibc's malloc arenas at ARENAS; True when it did (False: not glibc, or the
    environment's ``MALLOC_ARENA_MAX`` rules)."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: glibc's, if any
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, ARENAS))
