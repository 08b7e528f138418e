"""Low-noise co-metrics read at every step boundary (``ConfigState.mark``): CPU times and engine counters.

A :class:`StepProbe` lives for one trial of one config. At each boundary it reads, in this order,

    end of the step:    client CPU, server CPU, engine counters
    start of the next:  (the same counters reading), server CPU, client CPU

so the probe's own work (and the engine's counter query) falls outside every measured window. Per step it
records, when the trial closes:

* ``server_cpu`` (s): CPU time of the server process tree (:class:`tdebench.measure.proctime.TreeCpu`, ns per
  thread), for steps marked with a ``test`` (rows ``test/step/server_cpu`` next to ``test/step/elapsed``);
* ``client_cpu`` (s): CPU time of tdebench's own process during the step, minus its threads that were already
  running and are not the one running the step (the resource sampler, the progress display). An embedded engine
  (SQLite) runs inside that process, so there its figure is the ``server_cpu`` row and no ``client_cpu`` row is
  written;
* the deltas of :meth:`~tdebench.api.engine.Instance.counters` as rows ``counters/<step>/<counter name>`` with
  the unit of :data:`tdebench.api.counters.COUNTERS`, for every marked step.

A step marked several times in one trial (``--repeat``) gets the mean per run. ``total``: the step's values also
add up into step ``total`` of the same test (e.g. the 22 query steps into the power total).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tdebench.api.counters import COUNTERS, LEVELS
from tdebench.api.trial import Recorder
from tdebench.measure.proctime import TreeCpu, TreeReading, read_threads_ns



class ClientCpu:
    """CPU of this process during a window, without its background threads (see the module docstring)."""

    def read(self) -> tuple[int, dict[int, int]]:
        """(process CPU ns, {tid: ns}) now. The threads are read just before and just after the process clock and
        averaged: reading /proc releases the GIL, so a busy background thread runs while its siblings are read,
        and one pass on one side of the clock billed its run to the window or took it out (±60 ms in CI)."""
        first = read_threads_ns(os.getpid())
        process = time.process_time_ns()
        second = read_threads_ns(os.getpid())
        return process, {tid: (ns + second[tid]) // 2 for tid, ns in first.items() if tid in second}

    @staticmethod
    def seconds_between(before: tuple[int, dict[int, int]], after: tuple[int, dict[int, int]],
                        worker: int) -> float:
        """Process CPU between the readings minus what threads other than ``worker`` that ran throughout used."""
        background = 0
        for tid, ns in after[1].items():
            if tid != worker and tid in before[1]:
                background += max(0, ns - before[1][tid])
        return max(0.0, (after[0] - before[0] - background) / 1e9)


@dataclass
class _Open:
    """The step being measured."""

    test: str
    step: str
    total: str
    worker: int
    client: tuple[int, dict[int, int]]
    server: TreeReading | None
    counters: dict[str, float]


@dataclass
class _Sums:
    """What the spans of one step added up to."""

    spans: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    counters: dict[str, float] = field(default_factory=dict)
    levels: dict[str, float] = field(default_factory=dict)


class StepProbe:
    """CPU times and engine counters per marked step of one trial (one config)."""

    def __init__(self, pids_fn: Callable[[], list[int]], counters_fn: Callable[[], dict[str, float]],
                 embedded: bool, scan_children: bool = True) -> None:
        self.tree = TreeCpu(pids_fn, scan_children)
        self.client = ClientCpu()
        self.counters_fn = counters_fn
        self.embedded = embedded
        self.notes: list[str] = []
        self._open: _Open | None = None
        self._last_counters: dict[str, float] | None = None  # read at the boundary just closed
        self._sums: dict[tuple[str, str], _Sums] = {}
        self._totals: dict[tuple[str, str], set[str]] = {}

    # boundaries --------------------------------------------------------------------------------------
    def end(self) -> None:
        """Close the open step (if any): client CPU, server CPU, then counters."""
        self._last_counters = None
        opened, self._open = self._open, None
        if opened is None:
            return
        client = self.client.read()
        server = None if self.embedded else self.tree.read()
        counters = self._counters()
        self._last_counters = counters
        sums = self._sums.setdefault((opened.test, opened.step), _Sums())
        sums.spans += 1
        cpu = self.client.seconds_between(opened.client, client, opened.worker)
        if self.embedded:
            sums.server_cpu += cpu
        else:
            sums.client_cpu += cpu
            if opened.server is not None and server is not None:
                sums.server_cpu += self.tree.seconds_between(opened.server, server)
        for name, value in counters.items():
            if name in LEVELS:
                sums.levels[name] = value
            elif name in opened.counters and value >= opened.counters[name]:  # not across a counter reset
                sums.counters[name] = sums.counters.get(name, 0.0) + value - opened.counters[name]
        if opened.total:
            self._totals.setdefault((opened.test, opened.total), set()).add(opened.step)

    def begin(self, step: str, test: str = "", total: str = "") -> None:
        """Open ``step``: counters (unless just read), server CPU, then client CPU."""
        counters = self._last_counters if self._last_counters is not None else self._counters()
        self._last_counters = None
        server = None if self.embedded else self.tree.read()
        self._open = _Open(test, step, total, threading.get_native_id(), (0, {}), server, counters)
        self._open.client = self.client.read()

    def _counters(self) -> dict[str, float]:
        try:
            return {k: float(v) for k, v in self.counters_fn().items()}
        except Exception as exc:  # noqa: BLE001 - a counter that cannot be read must not fail the step
            note = f"engine counters not read: {type(exc).__name__}: {exc}"[:300]
            if note not in self.notes:
                self.notes.append(note)
            return {}

    # results -----------------------------------------------------------------------------------------
    def per_run(self) -> dict[tuple[str, str], dict[str, float]]:
        """{(test, step): {metric: mean per run}} for every closed step, totals included."""
        out: dict[tuple[str, str], dict[str, float]] = {}
        for key, s in self._sums.items():
            values = {"server_cpu": s.server_cpu / s.spans}
            if not self.embedded:
                values["client_cpu"] = s.client_cpu / s.spans
            values.update({f"counter:{k}": v / s.spans for k, v in s.counters.items()})
            values.update({f"counter:{k}": v for k, v in s.levels.items()})
            out[key] = values
        for (test, total), steps in self._totals.items():
            summed: dict[str, float] = {}
            for step in steps:
                for metric, value in out.get((test, step), {}).items():
                    if metric.removeprefix("counter:") in LEVELS:
                        summed[metric] = value
                    else:
                        summed[metric] = summed.get(metric, 0.0) + value
            out[(test, total)] = summed
        return out

    def record(self, rec: Recorder, status: str | None = None) -> None:
        """Write the rows: CPU next to the step's own test (marked with one), counters under test "counters"."""
        self.end()
        for (test, step), values in self.per_run().items():
            for metric, value in values.items():
                if metric.startswith("counter:"):
                    name = metric.removeprefix("counter:")
                    rec.add("counters", step, name, value, COUNTERS.get(name, ("", ""))[0], status=status)
                elif test:
                    rec.add(test, step, metric, value, "s", status=status)
