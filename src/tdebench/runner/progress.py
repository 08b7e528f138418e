"""Where a long run stands: "5 of 12 trials, ~40 min left", from the trials measured so far.

A TPC-H run at SF 1 or a 10M-row CRUD run takes an hour or more; a progress bar per trial says nothing about
the whole. :class:`RunProgress` counts the trials the run still has to do (a resumed run counts only those)
and estimates the time left from the mean duration of the trials finished in this invocation.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def human_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``1 h 05 min``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


class RunProgress:
    """Counts trials to do and done; :meth:`label` names the next one's position and the time left."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.done = 0
        self._clock = clock
        self._started: float | None = None
        self._spent = 0.0

    def start(self) -> None:
        """A trial begins."""
        self._started = self._clock()

    def finish(self, trials: int = 1) -> None:
        """The trial begun last has ended (completed or failed: both took their time); ``trials``: that many
        trials ran together (the query schedule's block)."""
        if self._started is not None:
            self._spent += self._clock() - self._started
            self._started = None
        self.done += trials

    def left(self) -> float | None:
        """Estimated seconds for the trials not yet finished, or None before the first one ended."""
        if self.done == 0:
            return None
        return self._spent / self.done * max(0, self.total - self.done)

    def label(self) -> str:
        """``5 of 12 trials, ~40 min left`` for the trial about to start (no estimate before one has ended)."""
        position = f"{min(self.done + 1, self.total)} of {self.total} trials"
        left = self.left()
        return position if left is None else f"{position}, ~{human_duration(left)} left"
