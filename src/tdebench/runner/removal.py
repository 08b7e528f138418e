"""Removing a run's work directory at the end of the run (:mod:`tdebench.runner.orchestrator`).

It is removed after the run's servers and helpers have been stopped and waited for; still, a process that is
exiting can create a file while the tree is being deleted (ENOTEMPTY) and a filesystem being released can keep a
directory busy (EBUSY) for a moment, so a failed removal is tried again for a short, bounded time. What still
stays is said in one line; it stays listed in the run's ownership record (:mod:`tdebench.runner.ownership`), so
that ``tdebench cleanup`` removes it.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

#: seconds a failing removal of a work directory is tried again before it is left to ``tdebench cleanup``
REMOVE_S = 2.0


def remove_dir(path: Path, timeout: float = REMOVE_S, pause: float = 0.1) -> OSError | None:
    """Delete the tree ``path``, again while that fails, for up to ``timeout`` s; None once it is gone, else the
    last error (its ``filename`` says where it stuck)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            shutil.rmtree(path)
            return None
        except OSError as exc:
            if not os.path.lexists(path):  # nothing left to remove
                return None
            error = exc
        if time.monotonic() >= deadline:
            return error
        time.sleep(pause)


def remove_work_dir(path: Path, say: Callable[[str], None], timeout: float = REMOVE_S) -> bool:
    """Delete the run's work directory (True once it is gone); if it stays, ``say`` so in one line."""
    error = remove_dir(path, timeout)
    if error is None:
        return True
    where = f" at {error.filename}" if error.filename and os.fspath(error.filename) != os.fspath(path) else ""
    say(f"WARNING: the work directory {path} could not be removed ({error.strerror or error}{where}); "
        "`tdebench cleanup` removes what is left")
    return False
