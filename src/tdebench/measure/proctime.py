"""CPU time of a server process tree, read from /proc immediately before and after one statement.

Two sources, measured against each other (``python benchmarks/precision.py --probe-check``; docs/precision.md):

* ``/proc/<pid>/stat`` utime + stime (+ cutime + cstime for reaped children): the whole thread group including
  threads that have exited, but in clock ticks (10 ms), so one statement's figure is off by up to ±10 ms.
* ``/proc/<pid>/task/<tid>/schedstat``: the first field is the thread's time on a CPU in nanoseconds (the
  scheduler's own ``sum_exec_runtime``, which stat rounds down to ticks). Exact, but a thread that exits between
  the two reads takes its time with it.

:class:`TreeCpu` uses the per-thread nanoseconds and falls back to the tick figure for a process that lost a
thread between the two reads: one it saw that is gone, or one it never saw, which shows as a tick delta more
than :data:`LOST_SECONDS` above the per-thread sum (counted in ``fallbacks``). Children reaped in between come
in through the parent's cutime + cstime. Processes started in between count in full (their whole life is
inside).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from tdebench.proctree import descendants, descendants_or_none, read_stat

__all__ = ["CLK_TCK", "LOST_SECONDS", "ProcReading", "TreeCpu", "TreeReading", "descendants", "descendants_or_none",
           "read_stat", "read_threads_ns"]

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: a tick delta this far above the per-thread sum means a thread started and exited unseen (2 ticks: the two
#: readings' rounding)
LOST_SECONDS = 2.0 / CLK_TCK


@dataclass(frozen=True)
class ProcReading:
    """One process: its start time (ticks after boot), tick totals and per-thread nanoseconds."""

    start: int
    own_ticks: int        # utime + stime, every thread of the group, exited ones included
    child_ticks: int      # cutime + cstime: reaped children
    threads_ns: dict[int, int]  # tid -> time on a CPU (ns), live threads only


@dataclass
class TreeReading:
    """Every process of the tree at one moment."""

    procs: dict[int, ProcReading] = field(default_factory=dict)


def read_threads_ns(pid: int) -> dict[int, int]:
    """{tid: ns on a CPU} of every live thread of ``pid`` (empty when it is gone)."""
    out: dict[int, int] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as fh:
                out[int(tid)] = int(fh.read().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # exited while we listed
    return out


class TreeCpu:
    """Reads the CPU time of the process tree under ``pids_fn()`` (see the module docstring).

    ``scan_children``: look for descendants at every read (PostgreSQL backends and parallel workers); a server
    that is one process with threads (MariaDB) needs no scan.
    """

    def __init__(self, pids_fn: Callable[[], list[int]], scan_children: bool = True) -> None:
        self.pids_fn = pids_fn
        self.scan_children = scan_children
        self.fallbacks = 0   # windows in which some process lost a thread: its tick figure was used
        self.windows = 0

    def read(self) -> TreeReading:
        """The tree now (processes that vanish while being read are left out)."""
        try:
            roots = list(self.pids_fn())
        except Exception:  # noqa: BLE001 - e.g. the server is restarting: nothing to read
            roots = []
        pids = descendants(roots) if self.scan_children and roots else roots
        reading = TreeReading()
        for pid in pids:
            stat = read_stat(pid)
            if stat is None:
                continue
            threads = read_threads_ns(pid)
            reading.procs[pid] = ProcReading(stat[1], stat[2], stat[3], threads)
        return reading

    def seconds_between(self, before: TreeReading, after: TreeReading) -> float:
        """CPU seconds the tree used between two readings."""
        self.windows += 1
        total_ns = 0
        ticks = 0
        fell_back = False
        for pid, now in after.procs.items():
            old = before.procs.get(pid)
            if old is None or old.start != now.start:  # started in between: its whole life is inside
                total_ns += sum(now.threads_ns.values())
                ticks += now.child_ticks
                continue
            ticks += max(0, now.child_ticks - old.child_ticks)
            own_ns = sum(max(0, ns - old.threads_ns.get(tid, 0)) for tid, ns in now.threads_ns.items())
            own_ticks = max(0, now.own_ticks - old.own_ticks)
            if set(old.threads_ns) - set(now.threads_ns) or own_ticks / CLK_TCK - own_ns / 1e9 > LOST_SECONDS:
                ticks += own_ticks  # a thread exited: its time is only in the group's ticks
                fell_back = True
            else:
                total_ns += own_ns
        self.fallbacks += fell_back
        return total_ns / 1e9 + ticks / CLK_TCK

    @staticmethod
    def tick_seconds_between(before: TreeReading, after: TreeReading) -> float:
        """The same window from the tick counters alone (for comparing the two sources)."""
        ticks = 0
        for pid, now in after.procs.items():
            old = before.procs.get(pid)
            if old is None or old.start != now.start:
                ticks += now.own_ticks + now.child_ticks
            else:
                ticks += max(0, now.own_ticks - old.own_ticks) + max(0, now.child_ticks - old.child_ticks)
        return ticks / CLK_TCK
