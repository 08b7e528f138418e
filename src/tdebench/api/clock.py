"""The clock a workload times its own work with: wall time, less the time the schedule held its server still.

Every schedule but ``turns`` holds nothing, and :func:`now_ns` is ``time.perf_counter_ns``. Under ``--schedule
turns`` the twins run each step at the same moment but take turns on the machine (each twin's server is frozen
while the other's runs); the client thread of a twin then reads a clock that stands still while its server is
held (:func:`held_by`), so that a step's time is what its own server spent on it, turns included but not the other
twin's. Work timed by another process (a benchmark client that keeps its own time) cannot read this clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: the calling thread's held time: given a perf_counter_ns reading, the nanoseconds held up to it
Holder = Callable[[int], int]

_local = threading.local()


def now_ns() -> int:
    """``time.perf_counter_ns()`` less the time the calling thread's server was held up to now."""
    now = time.perf_counter_ns()
    holder: Holder | None = getattr(_local, "holder", None)
    return now if holder is None else now - holder(now)


def held_by(holder: Holder | None) -> None:
    """From now on :func:`now_ns` in the calling thread subtracts ``holder``'s time (None: nothing)."""
    _local.holder = holder
