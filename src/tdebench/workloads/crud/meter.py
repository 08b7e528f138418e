"""Time one step and the server CPU it cost, attributing the server's resources to that step.

Inside a trial the orchestrator's :class:`~tdebench.measure.sampler.ResourceSampler` watches the server; a
step is marked with ``state.mark(name)`` and closed with ``state.mark(None)``, and the step's server CPU is
read back from the sampler (so it equals the ``resources`` row the orchestrator writes for the step).
Outside a trial (load, validation, unit tests) the server CPU comes from psutil: user + system time of the
server process tree (``instance.server_pids()`` and their descendants) before and after.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil

from tdebench.api.trial import ConfigState


@dataclass
class StepTiming:
    """Wall seconds (perf_counter) and server CPU seconds of one step (None when unknown)."""

    step: str
    seconds: float = 0.0
    server_cpu: float | None = None


def tree_cpu_seconds(pids: list[int]) -> float | None:
    """User + system CPU seconds of ``pids`` and all their descendants (None if none can be read)."""
    seen: set[int] = set()
    total, found = 0.0, False
    for pid in pids:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for proc in procs:
            if proc.pid in seen:
                continue
            seen.add(proc.pid)
            try:
                if proc.pid == os.getpid():
                    total += time.process_time()
                else:
                    t = proc.cpu_times()
                    total += t.user + t.system
                found = True
            except psutil.Error:
                continue
    return total if found else None


@contextmanager
def measured(state: ConfigState, step: str) -> Iterator[StepTiming]:
    """``with measured(state, "select_100000") as t: ...`` -> t.seconds, t.server_cpu after the block."""
    timing = StepTiming(step)
    sampler = state.sampler
    cpu0 = None if sampler is not None else tree_cpu_seconds(state.instance.server_pids())
    state.mark(step)
    t0 = time.perf_counter()
    try:
        yield timing
    finally:
        timing.seconds = time.perf_counter() - t0
        state.mark(None)
        timing.server_cpu = _server_cpu(state, step, cpu0)


def _server_cpu(state: ConfigState, step: str, cpu0: float | None) -> float | None:
    sampler = state.sampler
    if sampler is not None:
        try:
            res = sampler.snapshot().per_step().get(step)
        except Exception:  # noqa: BLE001 - a missing CPU figure must not fail the step
            return None
        return res.server_cpu_s if res is not None else None
    cpu1 = tree_cpu_seconds(state.instance.server_pids())
    return cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
