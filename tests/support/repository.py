"""A copy of the repository, as a clean checkout has it: for tests that build or install it.

Building in place would leave ``build/`` and more in the working tree; a test
writes only inside its own temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def copy_of_the_repository(into: Path, source: Path = REPO) -> Path:
    """What git tracks in ``source``, as its working tree has it, symlinks kept, into ``into``.

    Untracked files stay out, so a user's own folder in the checkout (the
    docs' ``myapp/``) never reaches the copy; a new file gets in once
    ``git add`` has staged it.
    """
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached"], cwd=source, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        origin, target = source / name, into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            target.symlink_to(os.readlink(origin))
        elif origin.is_file():
            shutil.copy2(origin, target)
    return into


def a_checkout(into: Path) -> Path:
    """A git checkout of the repository's working tree in ``into``: its tracked files, staged."""
    copy_of_the_repository(into)
    for command in (["git", "init", "-q"], ["git", "add", "-A", "-f"]):
        subprocess.run(command, cwd=into, capture_output=True, check=True)
    return into
