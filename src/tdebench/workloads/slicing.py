"""What the interleaved OLTP schedules of TPC-C and sysbench share: the slice length, rounds, and a probe of the
server around each slice (its CPU time, its CPU while the other configs run, and its own counters).

With ``--schedule query`` (the default with a warm cache) an OLTP workload keeps every twin's clients ready and
runs measured slices of ``slice`` seconds on one config at a time, in a fresh random order every round; each round
is one paired observation (the ``round`` column of measurements.csv). docs/lab/oltp-interleaved.md has the runs
that chose the default slice length.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, TypeVar

from tdebench.api.counters import LEVELS, unit_of
from tdebench.api.engine import Instance
from tdebench.api.trial import ConfigState, Recorder
from tdebench.api.workload import SteppedTrial, Workload
from tdebench.measure.conditions import HostReading, conditions_between, read_host
from tdebench.measure.proctime import TreeCpu, TreeReading

T = TypeVar("T")

#: the slice length when none is given (seconds), per workload: 1 s, measured (docs/lab/oltp-interleaved.md,
#: "Slice length"): on a shared machine the noise lasts a few seconds, so shorter slices pair the arms more closely; a
#: 1-s slice resolved a TPC-C A/A test 1.5x narrower than 5-s slices in the same time, and a connected sysbench
#: process's throughput varied less per second of measured time in 1-s pairs than in 2-, 5- or 10-s ones
#: ("sysbench with connected clients")
DEFAULT_SLICE = 5.0
DEFAULT_SLICES = {"tpcc": 1.0, "sysbench": 1.0}
#: a --precision run's OLTP steps where --duration and --rampup are not given: the rule counts blocks, and many
#: short blocks narrow the interval sooner than a few long ones (docs/lab/oltp-interleaved.md, short blocks: a TPC-C
#: A/A test met ±2% in 17 blocks of 10-s steps, where 60-s steps reached 4 blocks in the same time)
PRECISION_STEPS: dict[str, float] = {"duration": 10.0, "rampup": 5.0}
#: the shortest slice (seconds): the rarest transaction kinds (TPC-C's 4% of the mix) need a few hundred samples
#: per slice for a p99
MIN_SLICE = 1.0
#: measured time per config of a warm-up block of slices (seconds): the ramp-up of every block already warms the
#: clients, and 1-s series started without any warm-up showed no transient in their first 30 s (docs/precision.md,
#: "The interleaved OLTP schedule"); a full block of warm-up cost 2.5 of a 15-minute run's minutes
WARMUP_SECONDS = 30.0
#: engine counters recorded per committed transaction of every slice (api/counters.py): the redo/WAL bytes, the
#: pages and bytes written, what crossed the encryption boundary and the cache misses, which tell whether a write
#: overhead is the log's, the pages' or neither
PER_TXN_COUNTERS = ("log_bytes", "pages_written", "bytes_written", "bytes_encrypted", "bytes_decrypted",
                    "bytes_encrypted_estimate", "bytes_decrypted_estimate", "cache_misses")


def check_slice(seconds: float) -> float:
    """``seconds`` if it is a usable slice length; ValueError naming the fix if not."""
    if seconds < MIN_SLICE:
        raise ValueError(f"slice must be at least {MIN_SLICE:g} s, not {seconds:g} s (shorter slices leave the rarer "
                         "transaction kinds too few samples for a p99); use e.g. --slice 5s")
    return seconds


def check_slice_fits(slice_: float | None, duration: float) -> None:
    """ValueError when a slice is longer than the measured time of a step."""
    if slice_ is not None and slice_ > duration:
        raise ValueError(f"slice ({slice_:g} s) is longer than duration ({duration:g} s), the measured time of each "
                         "config per step and block; use a shorter --slice or a longer --duration")


def slice_seconds(slice_: float | None, duration: float, default: float = DEFAULT_SLICE) -> float:
    """The slice length in force: the one given, else ``default`` (at most the step's duration)."""
    return slice_ if slice_ is not None else min(default, duration)


def rounds_for(slice_: float | None, duration: float, default: float = DEFAULT_SLICE) -> int:
    """Rounds per step and block: enough slices to give each config ``duration`` seconds of measured time."""
    return max(1, math.ceil(duration / slice_seconds(slice_, duration, default) - 1e-9))


def warmup_rounds_for(slice_: float | None, duration: float, default: float = DEFAULT_SLICE) -> int:
    """Rounds of a warm-up block: :data:`WARMUP_SECONDS` of slices per config, at most a measured block's."""
    rounds = rounds_for(slice_, duration, default)
    return min(rounds, max(1, math.ceil(WARMUP_SECONDS / slice_seconds(slice_, duration, default) - 1e-9)))


class SliceProbe:
    """Reads one config's server around its slices: CPU seconds in the slice, CPU while it waited for the other
    configs' slices (background work such as page flushing and purge, done in the other configs' time), and the
    deltas of the engine's own counters."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.cpu = TreeCpu(instance.server_pids)
        self.paused_since: TreeReading | None = None  # when this config's clients last stopped
        self._before: TreeReading | None = None
        self._counters: dict[str, float] = {}
        self._host: HostReading | None = None
        #: CPUs kept busy during the last slice by processes that are neither tdebench (its clients included) nor
        #: the servers: the other tenants whose load makes one slice slower than the next (None: not readable)
        self.foreign_cores: float | None = None

    def reset(self) -> None:
        """A new step: the time before it is not a pause between slices."""
        self.paused_since = None

    def start(self) -> float | None:
        """Before a slice: the server CPU seconds since the config's previous slice ended (None for the first)."""
        self._before = self.cpu.read()
        paused = None if self.paused_since is None else self.cpu.seconds_between(self.paused_since, self._before)
        self._counters = self._read_counters()
        self._host = self._read_host()
        return paused

    def stop(self) -> tuple[float, dict[str, float]]:
        """After a slice: (server CPU seconds of the slice, counter deltas over it)."""
        after = self.cpu.read()
        self.paused_since = after
        assert self._before is not None
        cpu = self.cpu.seconds_between(self._before, after)
        deltas = {k: v - self._counters[k] for k, v in self._read_counters().items()
                  if k in self._counters and k not in LEVELS}
        host = self._read_host()
        self.foreign_cores = None
        if self._host is not None and host is not None:
            self.foreign_cores = conditions_between(self._host, host)["foreign_cores"]
        return cpu, deltas

    def around(self, state: ConfigState, step: str, work: Callable[[], T]) -> tuple[T, float | None, float,
                                                                                dict[str, float]]:
        """``work()`` as one measured slice of ``step``, the probe read and the step marked around it: (its result,
        the server CPU while paused before it, the server CPU in it, the counter deltas over it)."""
        paused = self.start()
        state.mark(step)
        try:
            result = work()
        finally:
            state.mark(None)
            cpu, counters = self.stop()
        return result, paused, cpu, counters

    def _read_host(self) -> HostReading | None:
        try:  # tdebench's own tree (its clients are its children) and the servers' trees
            return read_host(lambda: [os.getpid(), *self.instance.server_pids()])
        except Exception:  # noqa: BLE001 - a diagnostic, never the cost of a measured slice
            return None

    def _read_counters(self) -> dict[str, float]:
        try:
            return self.instance.counters()
        except Exception:  # noqa: BLE001 - counters explain a figure, they never cost a measured slice
            return {}


def record_slice_costs(rec: Recorder, test: str, step: str, round: int, committed: int, cpu_s: float,
                       counters: dict[str, Any], paused_cpu_s: float | None,
                       foreign_cores: float | None = None) -> None:
    """Server CPU per transaction, the counters per transaction (step ``<step>.per_txn``), the CPU while paused
    and the other tenants' CPUs during the slice (``<step>.all/server_cpu_while_paused``, ``foreign_cores``)."""
    if paused_cpu_s is not None:
        rec.add(test, f"{step}.all", "server_cpu_while_paused", paused_cpu_s, "s", round=round)
    if foreign_cores is not None:
        rec.add(test, f"{step}.all", "foreign_cores", foreign_cores, "cores", round=round)
    if not committed:
        return
    rec.add(test, step, "server_cpu_per_txn", cpu_s / committed, "s", round=round)
    for name in PER_TXN_COUNTERS:
        if name in counters:
            rec.add(test, f"{step}.per_txn", name, counters[name] / committed, unit_of(name), round=round)


def precision_series(target: str, headline: tuple[str, str, str], test: str, step: str,
                     latency_step: str) -> tuple[str, str, str] | None:
    """What ``--precision-metric TARGET`` watches in an OLTP workload (:meth:`Workload.precision_target
    <tdebench.api.workload.Workload.precision_target>`): its ``headline``, ``cpu``: the server CPU per transaction of
    ``step`` (:func:`record_slice_costs`), ``p50``/``p95``/``p99``: the latency percentile of ``latency_step``."""
    return {"headline": headline, "cpu": (test, step, "server_cpu_per_txn"),
            **{f"p{p}": (test, latency_step, f"latency_p{p}") for p in (50, 95, 99)}}.get(target)


class SlicedWorkload(Workload):
    """An OLTP workload the interleaved schedule measures in slices (TPC-C, sysbench): its options (with
    ``slice_facts()``, ``duration`` and ``rampup``) in ``opts``, its trial of slices an instance of
    :attr:`sliced_trial`."""

    pairs_by_round = True
    opts: Any
    #: the trial of slices, made of (state, block, recorder, options, this workload)
    sliced_trial: Callable[..., SteppedTrial]
    #: what one paired observation is, for the manifest's ``schedule``
    pairing_unit = "the round: one slice of every config"

    def shown_options(self) -> dict[str, Any]:
        """The options given, with the steps' actual length (a ``--precision`` run has short steps unless told
        otherwise)."""
        return {**super().shown_options(), "duration": f"{self.opts.duration:g}s", "rampup": f"{self.opts.rampup:g}s"}

    def stepped_trial(self, state: ConfigState, block: int, rec: Recorder, repeat: int) -> SteppedTrial:
        """The interleaved schedule: the workload's clients kept ready, slices alternating between configs."""
        rec.workload = self.name
        return self.sliced_trial(state, block, rec, self.opts, self)

    def schedule_facts(self) -> dict[str, Any]:
        return {**self.opts.slice_facts(), "pairing_unit": self.pairing_unit}


class PooledSlices(SteppedTrial):
    """A sliced trial whose steps (``vuN``) each run on a pool of clients: opened (and ramped up) at the step's
    first slice, closed at the next step's, at the end and on an abort. Subclasses set :attr:`probe` and implement
    :meth:`open_pool`."""

    probe: SliceProbe
    pool: Any = None
    pool_step: str = ""

    def open_pool(self, step: str) -> Any:
        """A new pool of clients for ``step``, connected and ramped up."""
        raise NotImplementedError

    def pool_for(self, step: str) -> Any:
        """The pool of ``step``: the current one, or at the step's first slice a new one (the previous closed)."""
        if self.pool_step != step:
            self.close_pool()
            self.pool = self.open_pool(step)
            self.pool_step = step
            self.probe.reset()
        return self.pool

    def ready(self, step: str) -> None:
        """Open (connect and ramp up) the pool of ``step`` before its first slice (the duet's barrier)."""
        self.pool_for(step)

    def close_pool(self) -> None:
        pool, self.pool, self.pool_step = self.pool, None, ""
        if pool is not None:
            pool.close()

    def abort(self) -> None:
        self.close_pool()
