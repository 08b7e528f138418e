"""Resources the DBMS itself consumed, sampled from /proc at about 1 Hz, attributed to steps.

A :class:`ResourceSampler` watches the process tree under the PIDs ``pids_fn()`` returns (asked again at every
sample; the descendants are found again at every sample from one pass over /proc/*/stat, so server processes
started later are counted; PIDs that vanish are skipped) and the host:

* server CPU seconds (user + system) from /proc/<pid>/stat via ``psutil.Process.cpu_times``. Each process's figure
  includes its reaped children (``children_user``/``children_system``), so a backend or parallel worker that starts
  and exits between two samples is still counted, through its parent; when a child we saw vanishes while its
  parent stays, its last reading is taken back because the parent's counters now hold its whole life. Resolution:
  one clock tick (10 ms) per process.
* server RSS (sum over the tree; shared memory such as PostgreSQL's shared_buffers is counted once per process
  that touched it, so this overstates) and IO bytes from /proc/<pid>/io: ``read_bytes``/``write_bytes`` (storage IO;
  writes counted when pages are dirtied, reads only when they miss the page cache) and ``read_chars``/
  ``write_chars`` (all read()/write() calls, cache hits included). Reaped children's IO also moves to the parent.
* host CPU % (all cores, /proc/stat), available memory, and the busy % of the disk holding ``disk_path``
  (/proc/diskstats io_ticks; see :mod:`tdebench.measure.diskstats`).

Server counters are cumulative since :meth:`ResourceSampler.start`; host CPU % and disk busy % cover the interval
that ends at each sample. :meth:`ResourceSampler.mark` takes a sample at once and starts a new step, so the
interval of every sample belongs to exactly one step and :meth:`ResourceSeries.per_step` needs no interpolation,
however short a step is.

Embedded engines (SQLite in tdebench's own process): pass ``lambda: [os.getpid()]``. This process's CPU is then
read with ``time.process_time`` (ns resolution instead of 10 ms ticks) and **includes the driver** — the Python
code that issues statements and fetches rows — while the sampler's own CPU and its /proc reads are subtracted.
"""

from __future__ import annotations

import csv
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path

import psutil

from tdebench.errors import UsageError
from tdebench.measure import diskstats

CSV_COLUMNS = (
    "t", "elapsed_s", "step", "server_cpu_s", "server_rss_bytes", "server_read_bytes", "server_write_bytes",
    "host_cpu_pct", "host_mem_available_bytes", "disk_busy_pct",
    # beyond the columns every consumer relies on:
    "server_read_chars", "server_write_chars", "server_procs", "kind",
)
_COUNTERS = ("cpu", "read_bytes", "write_bytes", "read_chars", "write_chars")


@dataclass(frozen=True)
class Sample:
    """One reading. ``step`` is the step the interval *ending* here belongs to ("" = no step)."""

    t: float                            # Unix time
    elapsed_s: float                    # since start()
    step: str
    server_cpu_s: float                 # cumulative since start()
    server_rss_bytes: int               # now, sum over the tree
    server_read_bytes: int              # cumulative since start()
    server_write_bytes: int
    host_cpu_pct: float | None          # over the interval ending here (None for the first sample)
    host_mem_available_bytes: int
    disk_busy_pct: float | None         # over the interval ending here, busiest watched device
    server_read_chars: int = 0
    server_write_chars: int = 0
    server_procs: int = 0               # processes in the tree now
    kind: str = "tick"                  # start, tick, mark or stop


@dataclass
class StepResources:
    """What the server used during one step (summed over every span marked with that name)."""

    step: str
    spans: int = 0
    seconds: float = 0.0
    server_cpu_s: float = 0.0
    read_bytes: int = 0
    write_bytes: int = 0
    read_chars: int = 0
    write_chars: int = 0
    peak_rss_bytes: int = 0
    host_cpu_pct: float | None = None   # time-weighted mean
    disk_busy_pct: float | None = None  # time-weighted mean

    @property
    def server_cores(self) -> float:
        """Average number of cores the server kept busy (CPU seconds / elapsed seconds)."""
        return self.server_cpu_s / self.seconds if self.seconds > 0 else 0.0


@dataclass
class ResourceSeries:
    """The samples of one sampling session, with what is needed to read them."""

    samples: list[Sample]
    interval: float
    disk_devices: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sampler_cpu_s: float = 0.0          # CPU the sampler itself used (both its thread and marks)
    embedded: bool = False              # this process was among the watched PIDs (includes the driver)

    def per_step(self, include_unmarked: bool = False) -> dict[str, StepResources]:
        """Resources per step name, in order of first appearance (the unmarked "" step only on request)."""
        steps: dict[str, StepResources] = {}
        weights: dict[str, dict[str, float]] = {}
        for before, after in zip(self.samples, self.samples[1:]):
            name = after.step
            if name == "" and not include_unmarked:
                continue
            res = steps.get(name) or steps.setdefault(name, StepResources(name))
            if before.step != name or res.spans == 0:
                res.spans += 1
            _add_interval(res, before, after, weights.setdefault(name, {}))
        for name, res in steps.items():
            w = weights[name]
            res.host_cpu_pct = w["host"] / w["host_s"] if w.get("host_s") else None
            res.disk_busy_pct = w["disk"] / w["disk_s"] if w.get("disk_s") else None
        return steps

    def total(self) -> StepResources:
        """Resources over the whole session, marked or not."""
        res, weights = StepResources("total", spans=1), {}
        for before, after in zip(self.samples, self.samples[1:]):
            _add_interval(res, before, after, weights)
        res.host_cpu_pct = weights["host"] / weights["host_s"] if weights.get("host_s") else None
        res.disk_busy_pct = weights["disk"] / weights["disk_s"] if weights.get("disk_s") else None
        return res

    def write_csv(self, path: Path) -> Path:
        """One row per sample (columns: :data:`CSV_COLUMNS`), written to a temp file then renamed."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(CSV_COLUMNS)
            for s in self.samples:
                writer.writerow([
                    f"{s.t:.3f}", f"{s.elapsed_s:.6f}", s.step, f"{s.server_cpu_s:.6f}", s.server_rss_bytes,
                    s.server_read_bytes, s.server_write_bytes, _fmt(s.host_cpu_pct), s.host_mem_available_bytes,
                    _fmt(s.disk_busy_pct), s.server_read_chars, s.server_write_chars, s.server_procs, s.kind,
                ])
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path

    @classmethod
    def read_csv(cls, path: Path, interval: float = 1.0) -> "ResourceSeries":
        """Samples back from :meth:`write_csv` (notes and devices are not in the CSV)."""
        types = {f.name: f.type for f in fields(Sample)}
        samples = []
        with Path(path).open(newline="") as fh:
            for row in csv.DictReader(fh):
                values = {}
                for name, text in row.items():
                    if name not in types:
                        continue
                    kind = str(types[name])
                    if name in ("step", "kind"):
                        values[name] = text
                    elif text == "" and "None" in kind:
                        values[name] = None
                    elif kind.startswith("int"):
                        values[name] = int(text)
                    else:
                        values[name] = float(text)
                samples.append(Sample(**values))
        return cls(samples, interval)


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _add_interval(res: StepResources, before: Sample, after: Sample, weights: dict[str, float]) -> None:
    dt = max(0.0, after.elapsed_s - before.elapsed_s)
    res.seconds += dt
    res.server_cpu_s += after.server_cpu_s - before.server_cpu_s
    res.read_bytes += after.server_read_bytes - before.server_read_bytes
    res.write_bytes += after.server_write_bytes - before.server_write_bytes
    res.read_chars += after.server_read_chars - before.server_read_chars
    res.write_chars += after.server_write_chars - before.server_write_chars
    res.peak_rss_bytes = max(res.peak_rss_bytes, before.server_rss_bytes, after.server_rss_bytes)
    if after.host_cpu_pct is not None:
        weights["host"] = weights.get("host", 0.0) + after.host_cpu_pct * dt
        weights["host_s"] = weights.get("host_s", 0.0) + dt
    if after.disk_busy_pct is not None:
        weights["disk"] = weights.get("disk", 0.0) + after.disk_busy_pct * dt
        weights["disk_s"] = weights.get("disk_s", 0.0) + dt


@dataclass
class _Reading:
    """Cumulative counters of one process (including its reaped children)."""

    ppid: int
    born: float          # seconds since boot
    rss: int
    counters: dict[str, float]
    children_cpu: float  # the part of counters["cpu"] that reaped children used


class ResourceSampler:
    """Samples a DBMS process tree and the host in a background thread; use as a context manager.

    ``pids_fn`` returns the root PIDs (e.g. the postmaster, mariadbd); it is called at every sample and may raise
    or return PIDs that no longer exist — those are skipped and noted. ``disk_path`` picks the block device whose
    busy % is recorded (the data directory); None means all whole disks (the busiest is recorded).
    """

    def __init__(self, pids_fn: Callable[[], list[int]], interval: float = 1.0, disk_path: Path | None = None) -> None:
        if not (interval > 0):
            raise UsageError(f"sampling interval must be positive, not {interval}", "give e.g. interval=1.0 (1 Hz)")
        self.pids_fn = pids_fn
        self.interval = float(interval)
        self.disk_path = disk_path
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._series: ResourceSeries | None = None
        self._samples: list[Sample] = []
        self._notes: list[str] = []
        self._step = ""
        self._tracked: dict[int, _Reading] = {}
        self._totals = dict.fromkeys(_COUNTERS, 0.0)
        self._own_cpu_ns = 0
        self._own_rchar = 0
        self._embedded = False
        self._devices: list[str] = []
        self._boot_time = psutil.boot_time()
        self._procs: dict[int, tuple[int, psutil.Process]] = {}  # pid -> (start ticks, Process), reused

    # --- lifecycle ---------------------------------------------------------------------------------------

    def __enter__(self) -> "ResourceSampler":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> "ResourceSampler":
        """Take the baseline sample and start the background thread."""
        if self._thread is not None:
            raise RuntimeError("this ResourceSampler was already started; make a new one per session")
        self._devices, how = diskstats.devices_for_path(self.disk_path)
        self._notes.append(f"disk busy %: {how}")
        self._t0_wall, self._t0_mono = time.time(), time.perf_counter()
        self._prev_host = self._read_host_cpu()
        self._prev_disk = diskstats.read_io_ticks()
        self._prev_mono, self._prev_boot = self._t0_mono, _boot_clock()
        with self._lock:
            self._take("start", baseline=True)
        self._thread = threading.Thread(target=self._loop, name="tdebench-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> ResourceSeries:
        """Take a last sample, stop the thread and return the series (again on later calls)."""
        if self._series is not None:
            return self._series
        if self._thread is None:
            raise RuntimeError("ResourceSampler.stop() before start()")
        self._stop_event.set()
        self._thread.join()
        with self._lock:
            self._take("stop")
            self._series = self._snapshot()
        return self._series

    def snapshot(self) -> ResourceSeries:
        """The series so far, while sampling goes on (e.g. to write it after each trial)."""
        with self._lock:
            return self._snapshot()

    def mark(self, step: str | None) -> None:
        """Close the current step with a sample now and start ``step`` (None or "" = no step)."""
        if self._thread is None or self._series is not None:
            raise RuntimeError("ResourceSampler.mark() outside start()/stop()")
        with self._lock:
            self._take("mark")
            self._step = step or ""

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """``with sampler.step("q01"): ...`` marks the block as one step and restores the step around it."""
        previous = self._step
        self.mark(name)
        try:
            yield
        finally:
            self.mark(previous)

    # --- sampling ----------------------------------------------------------------------------------------

    def _loop(self) -> None:
        next_due = self._t0_mono + self.interval
        while not self._stop_event.wait(max(0.0, next_due - time.perf_counter())):
            with self._lock:
                if self._stop_event.is_set():
                    break
                self._take("tick")
            next_due += self.interval
            now = time.perf_counter()
            if next_due < now:  # fell behind (suspended, overloaded): skip, do not burst
                next_due = now + self.interval

    def _take(self, kind: str, baseline: bool = False) -> None:
        """Read everything and append a sample; the caller holds the lock. Never raises."""
        cpu0 = time.thread_time_ns()
        rchar0 = _thread_rchar() if self._embedded else 0
        try:
            self._samples.append(self._read(kind, baseline))
        except Exception as exc:  # noqa: BLE001 - a sampler must not kill the run it watches
            self._note(f"sample failed: {type(exc).__name__}: {exc}")
        if self._embedded:
            self._own_rchar += max(0, _thread_rchar() - rchar0)
        self._own_cpu_ns += time.thread_time_ns() - cpu0

    def _read(self, kind: str, baseline: bool) -> Sample:
        mono, wall, boot = time.perf_counter(), time.time(), _boot_clock()
        readings = self._read_tree()
        rss = sum(r.rss for r in readings.values())
        if not baseline:
            self._accumulate(readings)
        self._tracked = readings
        host = self._read_host_cpu()
        disk = diskstats.read_io_ticks()
        elapsed = mono - self._prev_mono
        host_pct = None if baseline else _cpu_pct(self._prev_host, host)
        disk_pct = None if baseline else diskstats.busy_pct(self._prev_disk, disk, self._devices, elapsed)
        self._prev_host, self._prev_disk, self._prev_mono, self._prev_boot = host, disk, mono, boot
        totals = self._totals
        return Sample(
            t=wall, elapsed_s=mono - self._t0_mono, step=self._step, server_cpu_s=totals["cpu"],
            server_rss_bytes=rss, server_read_bytes=int(totals["read_bytes"]),
            server_write_bytes=int(totals["write_bytes"]), host_cpu_pct=host_pct,
            host_mem_available_bytes=psutil.virtual_memory().available, disk_busy_pct=disk_pct,
            server_read_chars=int(totals["read_chars"]), server_write_chars=int(totals["write_chars"]),
            server_procs=len(readings), kind=kind,
        )

    def _read_tree(self) -> dict[int, _Reading]:
        try:
            roots = list(self.pids_fn())
        except Exception as exc:  # noqa: BLE001 - e.g. the server is being restarted
            self._note(f"pids_fn failed: {type(exc).__name__}: {exc}")
            roots = []
        tree = self._find_tree(roots)
        self._embedded = self._embedded or os.getpid() in tree
        readings, cache = {}, {}
        for pid, (ppid, start) in tree.items():
            cached = self._procs.get(pid)
            try:
                proc = cached[1] if cached is not None and cached[0] == start else psutil.Process(pid)
            except psutil.Error:
                continue
            reading = self._read_process(proc, ppid, start / _CLK_TCK)
            if reading is not None:
                readings[pid] = reading
                cache[pid] = (start, proc)
        self._procs = cache
        return readings

    def _find_tree(self, roots: list[int]) -> dict[int, tuple[int, int]]:
        """{pid: (ppid, start ticks)} of the roots and all their descendants: from the kernel's children lists
        (/proc/<pid>/task/<tid>/children, a few files), else from one pass over every /proc/*/stat."""
        tree = _tree_from_children(roots)
        if tree is not None:
            for root in roots:
                if root not in tree:
                    self._note(f"process {root} is gone (skipped)")
            return tree
        table = _proc_table()
        if table is None:  # no listable /proc: psutil's way
            return self._find_tree_psutil(roots)
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        tree: dict[int, tuple[int, int]] = {}
        for root in roots:
            if root not in table:
                self._note(f"process {root} is gone (skipped)")
                continue
            stack = [root]
            while stack:
                pid = stack.pop()
                if pid not in tree and pid in table:
                    tree[pid] = table[pid]
                    stack.extend(children.get(pid, ()))
        return tree

    def _find_tree_psutil(self, roots: list[int]) -> dict[int, tuple[int, int]]:
        tree: dict[int, tuple[int, int]] = {}
        for pid in roots:
            try:
                root = psutil.Process(pid)
                for proc in [root, *root.children(recursive=True)]:
                    tree.setdefault(proc.pid, (proc.ppid(), round((proc.create_time() - self._boot_time) * _CLK_TCK)))
            except psutil.NoSuchProcess:
                self._note(f"process {pid} is gone (skipped)")
            except psutil.AccessDenied:
                self._note(f"no permission to read process {pid} (skipped)")
        return tree

    def _read_process(self, proc: psutil.Process, ppid: int, born: float) -> _Reading | None:
        """Counters of one process, or None if it vanished. ``born``: seconds after boot it started."""
        try:
            with proc.oneshot():
                times = proc.cpu_times()
                try:
                    rss = proc.memory_info().rss
                except psutil.ZombieProcess:
                    rss = 0
                try:
                    io = proc.io_counters()
                    io_values = {"read_bytes": io.read_bytes, "write_bytes": io.write_bytes,
                                 "read_chars": getattr(io, "read_chars", 0),
                                 "write_chars": getattr(io, "write_chars", 0)}
                except (psutil.AccessDenied, psutil.ZombieProcess) as exc:  # a zombie keeps its last values
                    if isinstance(exc, psutil.AccessDenied):
                        self._note(f"no permission to read the IO counters of process {proc.pid} (IO not counted)")
                    old = self._tracked.get(proc.pid)
                    io_values = {k: old.counters[k] for k in _COUNTERS[1:]} if old else dict.fromkeys(_COUNTERS[1:], 0)
        except psutil.NoSuchProcess:
            return None
        children_cpu = getattr(times, "children_user", 0.0) + getattr(times, "children_system", 0.0)
        if proc.pid == os.getpid():  # embedded: ns-resolution CPU of this process minus the sampler's own
            cpu = time.process_time() - self._own_cpu_ns / 1e9 + children_cpu
            io_values["read_chars"] = max(0, io_values["read_chars"] - self._own_rchar)
        else:
            cpu = times.user + times.system + children_cpu
        return _Reading(ppid, born, rss, {"cpu": cpu, **io_values}, children_cpu)

    def _accumulate(self, readings: dict[int, _Reading]) -> None:
        """Add what the tree used since the last sample to the running totals."""
        old_tracked, born_after = self._tracked, self._prev_boot - 0.02  # start times have 10 ms ticks
        delta = dict.fromkeys(_COUNTERS, 0.0)
        for pid, now in readings.items():
            old = old_tracked.get(pid)
            if old is not None and _same(old, now):
                for key in _COUNTERS:
                    delta[key] += max(0.0, now.counters[key] - old.counters[key])
            elif now.born >= born_after:  # started since the last sample: all of its life is in this interval
                for key in _COUNTERS:
                    delta[key] += now.counters[key]
            # else: existed before but was not watched (a new root PID): its past is not ours
        budgets: dict[int, dict[str, float]] = {}
        for pid, old in old_tracked.items():
            now = readings.get(pid)
            if now is not None and _same(old, now):
                continue
            parent_old, parent_now = old_tracked.get(old.ppid), readings.get(old.ppid)
            if parent_old is None or parent_now is None or not _same(parent_old, parent_now):
                continue  # no watched parent (a root that exited): what it used since the last sample is lost
            # reaped by a watched parent, whose counters now hold its whole life: take back what we counted,
            # at most what the parent's counters grew by (its children part, for CPU)
            budget = budgets.setdefault(old.ppid, {
                key: (parent_now.children_cpu - parent_old.children_cpu if key == "cpu"
                      else parent_now.counters[key] - parent_old.counters[key]) for key in _COUNTERS})
            for key in _COUNTERS:
                taken = max(0.0, min(old.counters[key], budget[key]))
                budget[key] -= taken
                delta[key] -= taken
        for key in _COUNTERS:
            self._totals[key] += max(0.0, delta[key])

    def _read_host_cpu(self) -> tuple[float, float]:
        """(busy, total) CPU seconds of the whole host since boot (guest time is already inside user)."""
        t = psutil.cpu_times()
        total = sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)
        idle = t.idle + getattr(t, "iowait", 0.0)
        return total - idle, total

    def _note(self, text: str) -> None:
        if text not in self._notes and len(self._notes) < 100:
            self._notes.append(text)

    def _snapshot(self) -> ResourceSeries:
        notes = list(self._notes)
        if self._embedded:
            notes.append("embedded: server CPU is this process's CPU, so it includes the driver (statement "
                         "execution and result fetching in Python); the sampler's own CPU is subtracted")
        return ResourceSeries(list(self._samples), self.interval, list(self._devices), notes,
                              self._own_cpu_ns / 1e9, self._embedded)


def _same(a: _Reading, b: _Reading) -> bool:
    """The same process (not a reused PID): equal start times."""
    return abs(a.born - b.born) < 0.005


def _cpu_pct(before: tuple[float, float], after: tuple[float, float]) -> float | None:
    busy, total = after[0] - before[0], after[1] - before[1]
    return None if total <= 0 else max(0.0, min(100.0, busy / total * 100))


_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree_from_children(roots: list[int]) -> dict[int, tuple[int, int]] | None:
    """{pid: (ppid, start ticks)} of ``roots`` and their descendants; None where children lists are missing."""
    from tdebench.measure.proctime import descendants_or_none, read_stat

    pids = descendants_or_none(roots)
    if pids is None:
        return None
    tree = {}
    for pid in pids:
        stat = read_stat(pid)
        if stat is not None:
            tree[pid] = (stat[0], stat[1])
    return tree


def _proc_table() -> dict[int, tuple[int, int]] | None:
    """{pid: (ppid, start time in clock ticks after boot)} of every process; None if /proc cannot be listed."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields_ = fh.read().rpartition(b")")[2].split()  # the command name may hold spaces and ')'
            table[int(name)] = (int(fields_[1]), int(fields_[19]))
        except (OSError, IndexError, ValueError):
            continue  # exited while we listed
    return table or None


def _boot_clock() -> float:
    """Seconds since boot on the clock process start times use (CLOCK_BOOTTIME)."""
    return time.clock_gettime(getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC))


def _thread_rchar() -> int:
    """Bytes this thread read through read() so far (to take the sampler's /proc reads out of read_chars)."""
    try:
        with open("/proc/thread-self/io", "rb") as fh:
            for line in fh.read().splitlines():
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
