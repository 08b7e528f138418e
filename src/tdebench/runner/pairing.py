"""The parts of ``--schedule duet`` that make one simultaneous pair: the twins' client threads, the barrier that
releases them together, the CPU sets they swap, and what each twin waited on in the pair.

Each twin has one client thread per block (:class:`TwinWorker`), which joins the twin's cgroup when it starts (so
what it starts, e.g. TPC-C's virtual users or sysbench, starts there too). A pair (:func:`run_pair`) hands each
thread one job; each thread reads its group, waits at a barrier shared by both, notes the moment it was released
(the pair's *skew* is how far apart the two releases were), runs its job and reads its group again. The CPU sets
(:func:`cpu_slots`) alternate between the twins from pair to pair, starting from a random side in every block
(:func:`slot_orders`), and while a pair runs they are swapped every :data:`SWAP_SECONDS` (:class:`CpuSwapper`), so
that each twin runs about half of every step on each CPU set. Swapping between pairs alone is not enough where one
CPU is faster for I/O: a virtual machine whose disk has one queue takes all of that disk's interrupts on one CPU,
and the twin that ran a long, read-bound query there finished it a few percent sooner (its group was charged the
interrupts' CPU time too), so a block's ratio followed the side its longest query happened to run on.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

#: seconds a twin waits at the barrier for the other (both arrive right after reading their groups)
BARRIER_TIMEOUT = 120.0
#: seconds between two swaps of the twins' CPU sets inside a pair: short against a long step, long against a swap
#: (two writes to cpuset.cpus, each moving a group's threads at once)
SWAP_SECONDS = 0.2


def cpu_slots(cpus: Iterable[int], twins: int = 2) -> list[str]:
    """The CPUs split into ``twins`` equal sets (cpuset syntax, e.g. ["0", "1"] or ["0,1", "2,3"]); an odd CPU
    left over is given to neither. ValueError with fewer CPUs than twins."""
    ordered = sorted(cpus)
    size = len(ordered) // twins
    if size < 1:
        raise ValueError(f"{len(ordered)} CPU(s) for {twins} twins")
    return [",".join(str(c) for c in ordered[i * size:(i + 1) * size]) for i in range(twins)]


def slot_orders(seed: int, block: int, pairs: int, twins: int = 2) -> list[tuple[int, ...]]:
    """For every pair of a block, the CPU set (index into :func:`cpu_slots`) of each twin in plan order: the sets
    rotate by one every pair, from a side drawn from ``random.Random("<seed>:<block>:cpus")``."""
    first = random.Random(f"{seed}:{block}:cpus").randrange(twins)
    return [tuple((first + i + t) % twins for t in range(twins)) for i in range(pairs)]


class Rotation:
    """What moves the twins while a pair runs (a context manager around the pair): a thread that calls
    :meth:`_step` every ``period`` seconds until the pair ends or a step returns False. :attr:`count` moves so far,
    :attr:`timings` the seconds each took, :attr:`failed` why the moving stopped early."""

    def __init__(self, twins: int, period: float) -> None:
        self.period = period
        self.count = 0
        self.timings: list[float] = []
        self.failed: str | None = None
        self._twins = twins
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Rotation:
        if self._twins > 1 and self.period > 0 and not self.failed:
            self._thread = threading.Thread(target=self._loop, name=f"tdebench-{type(self).__name__}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            if not self._step():
                break
        # alive until the pair ends: a thread that ended inside a twin's step would leave the CPU it used in that
        # step's client_cpu (measure/probes.py takes out the threads it can still read at the step's end)
        self._stop.wait()

    def _step(self) -> bool:
        """One move; False stops the rotation."""
        raise NotImplementedError

    def done(self, label: str) -> None:
        """A twin's step returned (default: the rotation goes on until the pair ends)."""


class CpuSwapper(Rotation):
    """While a pair runs, swaps the twins' CPU sets every ``period`` seconds.

    ``setters`` set each twin's CPUs, in the order of ``start`` (each twin's index into ``slots`` when the pair
    began); which twin's set is written first alternates, so neither is the one that briefly shares a CPU with the
    other after every swap. A write that fails stops the swapping (the pair goes on with the sets it has)."""

    def __init__(self, setters: list[Callable[[str], None]], slots: list[str], start: tuple[int, ...],
                 period: float = SWAP_SECONDS) -> None:
        super().__init__(len(setters), period)
        self.setters, self.slots, self.start = setters, slots, start

    def _step(self) -> bool:
        shift = self.count + 1
        twins = list(range(len(self.setters)))
        if shift % 2:
            twins.reverse()
        began = time.monotonic()
        try:
            for twin in twins:
                self.setters[twin](self.slots[(self.start[twin] + shift) % len(self.slots)])
        except OSError as exc:
            self.failed = str(exc)
            return False
        self.timings.append(time.monotonic() - began)
        self.count = shift
        return True


@dataclass
class Arm:
    """What one twin did in one pair."""

    label: str
    #: when the barrier released its thread, and when its job returned (time.monotonic_ns)
    started_ns: int | None = None
    ended_ns: int | None = None
    error: BaseException | None = None
    #: what its group waited on and used during the job (:func:`tdebench.runner.cgroups.used_between`)
    used: dict[str, float] = field(default_factory=dict)


def skew_us(arms: dict[str, Arm]) -> float | None:
    """How far apart the twins' releases were, in microseconds (None unless both were released)."""
    starts = [a.started_ns for a in arms.values() if a.started_ns is not None]
    if len(starts) < 2 or len(starts) != len(arms):
        return None
    return (max(starts) - min(starts)) / 1000.0


class TwinWorker:
    """One twin's client thread for one block; ``attach(thread id)`` runs in it first (it joins the twin's
    cgroup). Daemon: a job stuck in a dead server never holds up tdebench's exit."""

    def __init__(self, label: str, attach: Callable[[int], Any]) -> None:
        self.label = label
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._attach = attach
        self._thread = threading.Thread(target=self._loop, name=f"tdebench-duet-{label}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            self._attach(threading.get_native_id())
        except Exception:  # noqa: BLE001 - the group's own reading then shows what was not placed
            pass
        while (item := self._jobs.get()) is not None:
            job, future = item
            try:
                future.set_result(job())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

    def submit(self, job: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((job, future))
        return future

    def close(self, timeout: float = 5.0) -> None:
        """No more jobs; wait a little for the thread to leave (a daemon left behind never blocks the exit)."""
        self._jobs.put(None)
        self._thread.join(timeout)


Reader = Callable[[], Any]
Between = Callable[[Any, Any], dict[str, float]]


def run_pair(workers: dict[str, TwinWorker], jobs: dict[str, Callable[[], Any]], readers: dict[str, Reader],
             between: dict[str, Between], done: Callable[[str], None] | None = None) -> dict[str, Arm]:
    """Run every twin's job at the same moment: each in its twin's thread, released by one barrier; returns each
    twin's :class:`Arm` (its error kept, never raised here). ``readers[label]()`` reads the twin's group before and
    after its job, ``between[label](before, after)`` says what it used in between; ``done(label)`` is called as
    soon as a twin's job has returned (or raised)."""
    barrier = threading.Barrier(len(jobs))

    def arm(label: str, job: Callable[[], Any]) -> Arm:
        out = Arm(label)
        before = _read(readers[label])
        try:
            barrier.wait(BARRIER_TIMEOUT)
        except threading.BrokenBarrierError as exc:
            out.error = RuntimeError(f"the other twin did not reach the start of the pair within "
                                     f"{BARRIER_TIMEOUT:.0f} s")
            out.error.__cause__ = exc
            return out
        out.started_ns = time.monotonic_ns()
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 - the schedule decides (failed trial, or interrupt)
            out.error = exc
        out.ended_ns = time.monotonic_ns()
        if done is not None:
            done(label)
        after = _read(readers[label])
        if before is not None and after is not None:
            try:
                out.used = between[label](before, after)
            except Exception:  # noqa: BLE001 - a diagnostic never costs a measured pair
                out.used = {}
        return out

    futures = {label: workers[label].submit(lambda lb=label, jb=job: arm(lb, jb)) for label, job in jobs.items()}
    return {label: future.result() for label, future in futures.items()}


def _read(reader: Reader) -> Any:
    try:
        return reader()
    except Exception:  # noqa: BLE001 - a reading that fails leaves the pair's waits unrecorded
        return None
