"""``--schedule turns``: the twins run each step at the same moment and take turns on the machine.

A pair of ``--schedule duet`` runs both twins at once, so that whatever the host does during it hits both alike;
but two twins reading from one disk at once share it, and a twin's CPU work (decrypting pages) then hides in the
time it waits for the other's reads: with pages from the disk the duet measured TDE at a third of what the twins
cost one after the other. Taking turns keeps the duet's pairing in time and gives each twin the machine alone:
while a pair runs, one twin's server is frozen (:mod:`tdebench.runner.freezer`) and the other's runs, and they swap
every :data:`TURN_SECONDS`; a twin whose step is done leaves the rotation and the other runs on alone. A twin's
client reads a clock that stands still while its server is held (:mod:`tdebench.api.clock`), so a step's time is
its own server's, and the disk's and the host's state of the minute is shared by both twins' steps.

:class:`Turns` is the rotation of one pair; :class:`HeldTime` keeps, per twin, the time its server was held.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from tdebench.runner.pairing import Rotation

#: seconds a twin runs before the other's turn: long against a swap (a freeze waits for reads in flight),
#: short against a step and against the minutes over which a virtual disk's latency drifts
TURN_SECONDS = 0.2


class Holdable(Protocol):
    """What a twin's freezer offers (:class:`tdebench.runner.freezer.Freezer`): :meth:`freeze` and
    :meth:`release` return the ``time.perf_counter_ns()`` taken right before they acted."""

    def freeze(self) -> int: ...

    def wait_frozen(self) -> None: ...

    def release(self) -> int: ...


class HeldTime:
    """Per twin, the stretches its server was held (perf_counter_ns); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: dict[str, int] = {}
        self._since: dict[str, int] = {}

    def start(self, label: str, at_ns: int) -> None:
        with self._lock:
            self._since.setdefault(label, at_ns)

    def stop(self, label: str, at_ns: int) -> None:
        with self._lock:
            since = self._since.pop(label, None)
            if since is not None:
                self._done[label] = self._done.get(label, 0) + max(0, at_ns - since)

    def held_ns(self, label: str, now_ns: int) -> int:
        """Nanoseconds ``label`` was held up to ``now_ns`` (a stretch still going counts up to it)."""
        with self._lock:
            since = self._since.get(label)
            return self._done.get(label, 0) + (max(0, now_ns - since) if since is not None else 0)

    def holder(self, label: str) -> Callable[[int], int]:
        """The function :func:`tdebench.api.clock.held_by` takes for ``label``'s client thread."""
        return lambda now_ns: self.held_ns(label, now_ns)


class Turns(Rotation):
    """The rotation of one pair: ``twins`` in the order they take turns, the first running at once; :meth:`done`
    takes a twin whose step returned out of the rotation. :attr:`count` is the number of turns (changes of the
    running twin), :attr:`timings` the seconds each freeze took until the twin's last task had stopped. A freeze
    that fails stops the rotation with every server running (:attr:`failed` says why)."""

    def __init__(self, twins: dict[str, Holdable], ledger: HeldTime, period: float = TURN_SECONDS) -> None:
        super().__init__(len(twins), period)
        self.twins, self.ledger = twins, ledger
        self.order = list(twins)
        self._running = self.order[0] if self.order else None
        self._left = set(self.order)
        self._lock = threading.Lock()

    def __enter__(self) -> Turns:
        if len(self.order) > 1 and self.period > 0:
            for label in self.order[1:]:
                if not self._hold(label):
                    break
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        with self._lock:
            self._release_all()

    def done(self, label: str) -> None:
        """``label``'s step returned: it leaves the rotation, and a twin still held runs on alone."""
        with self._lock:
            self._left.discard(label)
            if len(self._left) < 2:
                self._release_all()

    def _step(self) -> bool:
        with self._lock:
            if len(self._left) < 2 or self.failed:
                return False
            current = self._running
            following = self.order[(self.order.index(current) + 1) % len(self.order)]
            if not self._hold(current):
                return False
            self._release(following)
            self._running = following
            self.count += 1
            return True

    def _hold(self, label: str) -> bool:
        """Freeze ``label``; it is held from the moment of the freeze's write (what its tasks still ran until they
        stopped, a fraction of a millisecond, is charged to neither twin), and the next twin runs only once its
        last task has stopped."""
        try:
            began = self.twins[label].freeze()
            self.ledger.start(label, began)
            self.twins[label].wait_frozen()
        except OSError as exc:
            self.failed = str(exc)
            self._release_all()
            return False
        self.timings.append((time.perf_counter_ns() - began) / 1e9)
        return True

    def _release(self, label: str) -> None:
        self.ledger.stop(label, self.twins[label].release())  # charged from the moment it may run

    def _release_all(self) -> None:
        for label in self.order:
            self._release(label)
