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


def copy_of_the_repository(into: Path) -> Path:
    """What git tracks (and untracked files it does not ignore), symlinks kept, into ``into``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source, target = REPO / name, into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return into
