"""What watches one trial of one config: the 1 Hz resource sampler, the step probe and the host's state.

Started after the trial's reset (snapshot restore, cold restart) and stopped when the trial ends, whichever
schedule runs it. The sampler's series is written under samples/ and summed per step by the orchestrator; the
probe's rows (CPU times per statement, engine counters per step; :mod:`tdebench.measure.probes`) and the host's
conditions over the trial (:mod:`tdebench.measure.conditions`) are handed back with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tdebench.api.trial import ConfigState, Recorder
from tdebench.measure.conditions import HostReading, conditions_between, read_host
from tdebench.measure.probes import StepProbe
from tdebench.measure.sampler import ResourceSampler, ResourceSeries


@dataclass
class Watch:
    """The instruments of one running trial."""

    sampler: ResourceSampler | None
    probe: StepProbe
    host: HostReading | None


def _safe_host(server_pids: Callable[[], list[int]]) -> HostReading | None:
    try:
        return read_host(server_pids)
    except (OSError, ValueError):  # no /proc/stat or /proc/loadavg: nothing to record
        return None


def start_watch(state: ConfigState, server_pids: Callable[[], list[int]]) -> Watch:
    """Start the sampler (servers whose processes are local) and the probe; read the host.

    ``server_pids``: every server process of the run (other tenants' CPU is what the host used beyond them)."""
    host = _safe_host(server_pids)
    instance = state.instance
    sampler = None
    if instance.scannable:  # external servers: no local processes or disk to sample
        sampler = ResourceSampler(instance.server_pids, interval=1.0, disk_path=instance.data_dir)
        sampler.start()
    try:
        embedded = os.getpid() in instance.server_pids()
    except Exception:  # noqa: BLE001 - a server being restarted: read as a server
        embedded = False
    probe = StepProbe(instance.server_pids if instance.scannable else (lambda: []), instance.counters,
                      embedded=embedded, scan_children=instance.scannable and not embedded)
    state.sampler, state.probe = sampler, probe
    return Watch(sampler, probe, host)


def stop_watch(watch: Watch, state: ConfigState, server_pids: Callable[[], list[int]]) -> dict[str, Any] | None:
    """Detach the instruments from the state; the host's conditions over the trial (None when unreadable).
    The caller stops the sampler (it writes the series) and records the probe's rows."""
    state.probe = None
    watch.probe.end()
    after = _safe_host(server_pids)
    if watch.host is None or after is None:
        return None
    return conditions_between(watch.host, after)


def record_resources(rec: Recorder, series: ResourceSeries | None, status: str | None,
                     say: Callable[[Exception], None]) -> None:
    """Server CPU/IO per step and for the whole trial as measurements, with the trial's outcome as status
    (a failed trial's resources are not those of a completed one); ``say`` hears why they could not be."""
    if series is None:
        return
    try:
        for step, res in series.per_step().items():
            rec.add("resources", step, "server_cpu", res.server_cpu_s, "s", status=status)
            rec.add("resources", step, "server_read_bytes", res.read_bytes, "bytes", status=status)
            rec.add("resources", step, "server_write_bytes", res.write_bytes, "bytes", status=status)
            rec.add("resources", step, "server_peak_rss", res.peak_rss_bytes, "bytes", status=status)
        total = series.total()
        rec.add("resources", "trial", "server_cpu", total.server_cpu_s, "s", status=status)
        rec.add("resources", "trial", "server_read_bytes", total.read_bytes, "bytes", status=status)
        rec.add("resources", "trial", "server_write_bytes", total.write_bytes, "bytes", status=status)
    except Exception as exc:  # noqa: BLE001 - sampling must never cost a measured trial
        say(exc)
