"""Where a long run stands: "5 of 12 trials, ~40 min left", from the trials measured so far.

A TPC-H run at SF 1 or a 10M-row CRUD run takes an hour or more; a progress bar per trial says nothing about
the whole. :class:`RunProgress` counts the trials the run still has to do (a resumed run counts only those)
and estimates the time left from the measured trials finished in this invocation: the wall time from the end of
one to the end of the next, so that what runs between trials (a server restarted before a block, a cache dropped)
counts, and the warm-up trials apart (a warm-up block may be shorter: TPC-C warms up with fewer rounds). A "~17 s
left" two minutes before the end came from the mean time inside trials, a short warm-up included.
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

    def __init__(self, total: int, warmup: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.warmup_total = warmup  # of ``total``, the warm-up trials
        self.done = 0
        self._clock = clock
        self._mark: float | None = None  # the end of the last trial (or the start of the first)
        self._spent = {True: 0.0, False: 0.0}  # warm-up or not -> wall seconds of the trials finished
        self._count = {True: 0, False: 0}
        #: the clock's time after which no block starts (``--max-time``), None: none; with it ``total`` is a cap
        self.deadline: float | None = None

    def start(self) -> None:
        """A trial begins (the first one starts the clock; later ones run on from the end of the one before)."""
        if self._mark is None:
            self._mark = self._clock()

    def finish(self, trials: int = 1, warmup: bool = False) -> None:
        """The trial begun last has ended (completed or failed: both took their time); ``trials``: that many
        trials ran together (the query schedule's block); ``warmup``: they were warm-up trials."""
        now = self._clock()
        if self._mark is not None:
            self._spent[warmup] += now - self._mark
            self._count[warmup] += trials
        self._mark = now
        self.done += trials

    def left(self) -> float | None:
        """Estimated seconds for the trials not yet finished: the measured ones at the measured trials' pace, the
        warm-up ones at the warm-up trials' (else the measured'); None before a trial of the kind to come ended."""
        measured_left = max(0, self.total - self.warmup_total - self._count[False])
        warmup_left = max(0, self.warmup_total - self._count[True])
        pace = {kind: self._spent[kind] / self._count[kind] if self._count[kind] else None for kind in (True, False)}
        if measured_left and pace[False] is None:
            return None
        warm_pace = pace[True] if pace[True] is not None else pace[False]
        if warmup_left and warm_pace is None:
            return None
        estimate = measured_left * (pace[False] or 0.0) + warmup_left * (warm_pace or 0.0)
        if self.deadline is not None:  # a run ended by its time limit: the trials' cap is not what ends it
            estimate = min(estimate, max(0.0, self.deadline - self._clock()))
        return estimate

    def label(self) -> str:
        """``5 of 12 trials, ~40 min left`` for the trial about to start (no estimate before one has ended)."""
        cap = "at most " if self.deadline is not None else ""
        position = f"{min(self.done + 1, self.total)} of {cap}{self.total} trials"
        left = self.left()
        return position if left is None else f"{position}, ~{human_duration(left)} left"
