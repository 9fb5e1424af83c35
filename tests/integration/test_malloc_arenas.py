"""The CLI caps glibc's malloc arenas (entrypoints/malloc_arenas.py), unless told otherwise."""

from __future__ import annotations

import platform

import pytest

from jobtable.entrypoints.malloc_arenas import limit_malloc_arenas

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")


@glibc
def test_on_glibc_the_arenas_are_capped():
    assert limit_malloc_arenas() is True


def test_a_number_in_the_environment_is_left_to_rule(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert limit_malloc_arenas() is False
