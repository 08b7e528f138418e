"""The machine's state over one trial: load, steal time, other tenants' CPU, CPU frequency.

Read at the start and the end of every trial (block schedule) or block (query schedule), cheaply, from
/proc/loadavg, /proc/stat, /proc/self and /proc/<pid> of the run's servers, and the CPU frequency from
/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq (or /proc/cpuinfo's "cpu MHz" where there is no cpufreq,
as in most VMs). The manifest keeps one entry per trial (``conditions``); the report flags the trials that ran
during a noise spike (:mod:`tdebench.stats.noise`) and never drops them.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from tdebench.measure.proctime import CLK_TCK, descendants, read_stat


@dataclass(frozen=True)
class HostReading:
    """Counters of the whole host and of the run's own processes at one moment."""

    mono: float
    load1: float
    busy_ticks: int      # all CPUs: user + nice + system + irq + softirq (+ guest inside user)
    total_ticks: int     # all CPUs, steal included
    steal_ticks: int
    own_seconds: float   # this process and its reaped children
    servers_ticks: int   # the run's server processes (and their reaped children)
    mhz: tuple[float, ...]


def _proc_stat() -> tuple[int, int, int]:
    """(busy, total, steal) ticks of all CPUs from /proc/stat."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    fields += [0] * (10 - len(fields))
    user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait + steal, steal


def cpu_mhz() -> tuple[float, ...]:
    """Current frequency of every CPU in MHz (cpufreq, else /proc/cpuinfo); empty when neither says."""
    found = sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
    values = []
    for path in found:
        try:
            with open(path) as fh:
                values.append(int(fh.read().strip()) / 1000)
        except (OSError, ValueError):
            continue
    if values:
        return tuple(values)
    try:
        with open("/proc/cpuinfo") as fh:
            return tuple(float(line.split(":")[1]) for line in fh if line.startswith("cpu MHz"))
    except (OSError, ValueError, IndexError):
        return ()


def _servers_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        stat = read_stat(pid)
        if stat is not None:
            total += stat[2] + stat[3]
    return total


def read_host(server_pids: Callable[[], list[int]]) -> HostReading:
    """The host now (``server_pids``: every server process of the run, without this one)."""
    with open("/proc/loadavg") as fh:
        load1 = float(fh.read().split()[0])
    busy, total, steal = _proc_stat()
    own = os.times()
    try:
        pids = [p for p in descendants(list(server_pids())) if p != os.getpid()]
    except Exception:  # noqa: BLE001 - a server restarting: its CPU is then not subtracted
        pids = []
    return HostReading(time.monotonic(), load1, busy, total, steal,
                       own.user + own.system + own.children_user + own.children_system,
                       _servers_ticks(pids), cpu_mhz())


def conditions_between(before: HostReading, after: HostReading) -> dict[str, float | None]:
    """What the host did between two readings, for the manifest's ``conditions`` entries.

    ``steal_pct``: share of all CPU time the hypervisor gave to other guests; ``host_busy_pct``: busy share of
    all CPUs; ``foreign_cores``: CPUs kept busy by processes that are neither tdebench nor the run's servers
    (other tenants of the machine, in cores); ``load1``: the 1-minute load average at the end; ``mhz_min`` /
    ``mhz_max``: the lowest and highest frequency read at either end, ``mhz_changed`` whether any CPU's changed.
    """
    wall = max(after.mono - before.mono, 1e-9)
    total = after.total_ticks - before.total_ticks
    busy = after.busy_ticks - before.busy_ticks
    steal = after.steal_ticks - before.steal_ticks
    ours = (after.own_seconds - before.own_seconds) + (after.servers_ticks - before.servers_ticks) / CLK_TCK
    foreign = max(0.0, busy / CLK_TCK - ours) / wall
    mhz = before.mhz + after.mhz
    return {
        "seconds": round(wall, 3),
        "load1": after.load1,
        "load1_start": before.load1,
        "steal_pct": round(100 * steal / total, 3) if total > 0 else None,
        "host_busy_pct": round(100 * busy / total, 3) if total > 0 else None,
        "foreign_cores": round(foreign, 4),
        "mhz_min": min(mhz) if mhz else None,
        "mhz_max": max(mhz) if mhz else None,
        "mhz_changed": (before.mhz != after.mhz) if mhz else None,
    }
