"""Threads that each hold a connection to one config's server and run a piece of work each time they are
released: the sessions of a replay (segment by segment) and the connections of a statement mix (slice by slice).

:class:`GatedPool` starts its :class:`GatedThread` workers, waits until every one has connected (or failed to),
releases them all at once (:meth:`GatedPool.release`) and waits until every one has finished its piece
(:meth:`GatedPool.wait`); :meth:`GatedPool.close` lets them go.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tdebench.api.trial import ConfigState
from tdebench.encryption import redact

CONNECT_TIMEOUT = 60.0


class GatedThread(threading.Thread):
    """One connection; :meth:`work` runs each time the pool releases the thread."""

    def __init__(self, pool: "GatedPool", name: str) -> None:
        super().__init__(daemon=True, name=name)
        self.pool = pool
        self.go = threading.Event()
        self.conn: Any = None
        self.problem: BaseException | None = None

    def run(self) -> None:
        try:
            self.conn = self.pool.state.instance.connect()
        except BaseException as exc:  # noqa: BLE001 - said by the pool
            self.problem = exc
        self.pool.done.release()
        while self.conn is not None:
            self.go.wait()
            self.go.clear()
            if self.pool.closing:
                break
            try:
                self.work()
            finally:
                self.pool.done.release()
        if self.conn is not None:
            self.conn.close()

    def work(self) -> None:
        """One piece of work on :attr:`conn` (errors of single statements are the subclass's to record)."""
        raise NotImplementedError


class GatedPool:
    """The workers of one config; subclasses make them and call :meth:`start`."""

    def __init__(self, state: ConfigState) -> None:
        self.state = state
        self.done = threading.Semaphore(0)
        self.closing = False
        self.workers: list[GatedThread] = []

    def start(self, workers: list[GatedThread], what: str) -> None:
        """Start ``workers`` and wait until each has connected; RuntimeError naming ``what`` if one could not."""
        self.workers = workers
        for worker in workers:
            worker.start()
        self.wait(CONNECT_TIMEOUT, f"{what} of {self.state.label} did not connect within {CONNECT_TIMEOUT:.0f} s")
        problem = next((w.problem for w in workers if w.problem is not None), None)
        if problem is not None:
            self.close()
            raise RuntimeError(f"{what} of {self.state.label} could not connect: {redact(str(problem))}")

    def release(self) -> None:
        for worker in self.workers:
            worker.go.set()

    def wait(self, timeout: float | None, text: str) -> None:
        """Until every worker has finished its piece (or connected); RuntimeError ``text`` after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for _ in self.workers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self.done.acquire(timeout=left):
                raise RuntimeError(text)

    def close(self) -> None:
        self.closing = True
        self.release()
        for worker in self.workers:
            worker.join(timeout=30)
