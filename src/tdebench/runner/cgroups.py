"""A cgroup per twin of ``--schedule duet``: its own CPU set, an equal I/O weight, and what its tasks used.

cgroup v1 (the ``cpuset``, ``cpuacct``, ``blkio`` and, where mounted, ``cpu`` controllers, one directory each) and
cgroup v2 (one directory with ``cpuset``, ``io`` and ``cpu`` enabled) are supported; the groups are made inside
tdebench's own group of each hierarchy, named ``tdebench-<pid>-duet-<n>``. v1 can hold single threads (tdebench's
client thread of a twin joins its group, and the processes it starts follow it); v2 holds whole processes only, so
there a twin's client threads stay in tdebench's group. Only root can make them; :func:`unavailable` says why not
otherwise. The I/O weight is equal for both twins; whether the device's I/O scheduler honours weights at all (BFQ,
or v2's io.cost) is recorded beside it (:func:`io_weight_facts`).

What a group's tasks used is read from the group itself (:meth:`TwinGroup.read`): CPU time (``cpuacct.usage`` /
``cpu.stat``), CPU throttling (``cpu.stat``), bytes and requests read and written per device (``blkio.throttle.*`` /
``io.stat``), and per task from /proc: the time it waited for a CPU (``schedstat``'s run delay, ns) and, when the
kernel's delay accounting is on (``kernel.task_delayacct``), the time it waited for block I/O.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tdebench.engines.toolkit import cgroupfs

ROOT = Path("/sys/fs/cgroup")
PREFIX = "tdebench-"
#: the v1 controllers a twin's group needs; ``cpu`` (throttling) is read where it is mounted
V1_NEEDED = ("cpuset", "cpuacct", "blkio")
V2_NEEDED = ("cpuset", "io", "cpu")
#: the I/O weight of every twin (the controllers' default: an equal share)
IO_WEIGHT = 100
DELAYACCT = Path("/proc/sys/kernel/task_delayacct")


@dataclass(frozen=True)
class Hierarchies:
    """Where the groups are made: cgroup ``version`` and, per controller, tdebench's own group's directory."""

    version: str
    dirs: dict[str, Path]

    @property
    def bases(self) -> list[Path]:
        """Each directory once (co-mounted v1 controllers and v2 share one)."""
        return list(dict.fromkeys(self.dirs.values()))


def mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(mount root, mount point, fstype, v1 controllers) of every cgroup mount, from /proc/self/mountinfo."""
    out = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        options = set(tail[2].split(","))
        out.append((fields[3], Path(fields[4].replace("\\040", " ")), tail[0], options))
    return out


def inside(mount: Path, root: str, own: str) -> Path:
    """The directory of cgroup ``own`` in a hierarchy mounted at ``mount`` from its ``root``."""
    rel = os.path.relpath(own, root) if own.startswith(root) else own.lstrip("/")
    return mount if rel in (".", "") else mount / rel


@lru_cache(maxsize=1)
def locate() -> Hierarchies | None:
    """v1 when its needed controllers are mounted, else v2 with its controllers available; None when neither."""
    own = cgroupfs.own_paths()
    found_mounts = mounts()
    v1: dict[str, Path] = {}
    for root, point, fstype, options in found_mounts:
        if fstype == "cgroup":
            for name in ("cpuset", "cpuacct", "blkio", "cpu"):
                if name in options and name in own:
                    v1[name] = inside(point, root, own[name])
    if all(name in v1 for name in V1_NEEDED):
        return Hierarchies("1", v1)
    for root, point, fstype, _ in found_mounts:
        if fstype == "cgroup2" and "" in own:
            base = inside(point, root, own[""])
            return Hierarchies("2", {name: base for name in V2_NEEDED})
    return None


@lru_cache(maxsize=1)
def unavailable() -> str:
    """"" when twin groups can be made here; else why not (the reason of an exit-3 refusal)."""
    found = locate()
    probe = TwinGroup(f"{PREFIX}probe-{os.getpid()}", found) if found else None

    def make() -> str:
        assert probe is not None
        probe.create()
        probe.set_cpus(",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:1]))
        return ""
    return cgroupfs.why_not("CPU and I/O cgroup", found.bases[0] if found else None,
                            f"neither cgroup v1 (cpuset, cpuacct and blkio controllers) nor cgroup v2 is mounted under "
                            f"{ROOT}", make, lambda: probe and probe.release(wait=1.0))


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
        return True
    except OSError:
        return False


def _ints(path: Path) -> list[int]:
    try:
        return [int(v) for v in path.read_text().split()]
    except (OSError, ValueError):
        return []


@dataclass
class GroupReading:
    """One reading of a twin's group (cumulative counters; :func:`used_between` takes differences)."""

    at_ns: int
    cpu_ns: int | None = None
    throttled_ns: int | None = None
    throttled_periods: int | None = None
    #: device "MAJ:MIN" -> [read bytes, written bytes, read requests, write requests]; a device the group has not
    #: used yet is absent (every one, when it read and wrote nothing); None: the counters could not be read
    io: dict[str, list[int]] | None = None
    #: task id -> (ns waited for a CPU, clock ticks waited for block I/O or -1 when not accounted)
    tasks: dict[int, tuple[int, int]] = field(default_factory=dict)


class TwinGroup:
    """The cgroup(s) of one twin."""

    def __init__(self, name: str, hier: Hierarchies | None = None) -> None:
        found = hier or locate()
        if found is None:
            raise OSError("no usable cgroup hierarchy")
        self.hier, self.name = found, name

    @property
    def paths(self) -> list[Path]:
        return [base / self.name for base in self.hier.bases]

    def _dir(self, controller: str) -> Path:
        return self.hier.dirs[controller] / self.name

    def create(self) -> None:
        """Make the group's directories; a v1 cpuset gets its parent's memory nodes, every group the equal
        I/O weight. OSError when the controllers cannot be had."""
        if self.hier.version == "2":  # the controllers must be enabled for the parent's children
            _write(self.hier.bases[0] / "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_NEEDED))
        for path in self.paths:
            path.mkdir(exist_ok=True)
        cpuset = self._dir("cpuset")
        if not (cpuset / "cpuset.cpus").exists():
            raise OSError(f"the cpuset controller is not enabled for {cpuset.parent}'s children")
        if self.hier.version == "1":
            parent = cpuset.parent
            mems = (parent / "cpuset.effective_mems") if (parent / "cpuset.effective_mems").exists() else (
                parent / "cpuset.mems")
            (cpuset / "cpuset.mems").write_text(mems.read_text().strip() or "0")
        for name, text in (("blkio.bfq.weight", str(IO_WEIGHT)), ("blkio.weight", str(IO_WEIGHT)),
                           ("io.weight", f"default {IO_WEIGHT}"), ("io.bfq.weight", f"default {IO_WEIGHT}")):
            controller = "blkio" if name.startswith("blkio") else "io"
            if controller in self.hier.dirs and (self._dir(controller) / name).exists():
                _write(self._dir(controller) / name, text)

    def set_cpus(self, cpus: str) -> None:
        """The CPUs the group's tasks may run on, e.g. "0" or "2,3" (its tasks move at once)."""
        (self._dir("cpuset") / "cpuset.cpus").write_text(cpus)

    def add_process(self, pid: int) -> bool:
        """Move process ``pid`` (all its threads) into the group; False when it is gone."""
        return all([_write(path / "cgroup.procs", str(pid)) for path in self.paths])

    def add_thread(self, tid: int) -> bool:
        """Move one thread into the group (v1 only; v2 keeps threads with their process): whether it moved."""
        if self.hier.version != "1":
            return False
        return all([_write(path / "tasks", str(tid)) for path in self.paths])

    def adopt(self, pids: list[int], rounds: int = 10) -> None:
        """Move processes into the group until none of them is left outside (a child forked while its parent
        moved keeps the old group, so one pass can miss it)."""
        for _ in range(rounds):
            stray = [p for p in pids if p not in set(self.processes())]
            if not stray:
                return
            for pid in stray:
                self.add_process(pid)
            pids = [p for p in pids if Path(f"/proc/{p}").exists()]

    def held_elsewhere(self, pids: list[int]) -> str | None:
        """cgroup v2 holds a process in one group only: the other ``tdebench-*`` group one of ``pids`` is in (a
        memory cgroup bounding its page cache, which moving it here would lift), None when there is none."""
        if self.hier.version != "2":
            return None
        for pid in pids:
            try:
                own = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
            except OSError:
                continue
            path = next((line.split(":", 2)[2] for line in own if line.startswith("0::")), "")
            name = path.rstrip("/").rpartition("/")[2]
            if name.startswith(PREFIX) and name != self.name:
                return path
        return None

    def processes(self) -> list[int]:
        return _ints(self._dir("cpuacct") / "cgroup.procs")

    def tasks(self) -> list[int]:
        """Every thread in the group."""
        return _ints(self._dir("cpuacct") / ("tasks" if self.hier.version == "1" else "cgroup.threads"))

    def read(self, with_tasks: bool = True) -> GroupReading:
        """What the group's tasks used so far."""
        out = GroupReading(time.monotonic_ns())
        if self.hier.version == "1":
            usage = _ints(self._dir("cpuacct") / "cpuacct.usage")
            out.cpu_ns = usage[0] if usage else None
            if "cpu" in self.hier.dirs:
                stat = _keyed(self._dir("cpu") / "cpu.stat")
                out.throttled_ns, out.throttled_periods = stat.get("throttled_time"), stat.get("nr_throttled")
            out.io = _blkio(self._dir("blkio"))
        else:
            stat = _keyed(self._dir("cpu") / "cpu.stat")
            usage, throttled = stat.get("usage_usec"), stat.get("throttled_usec")
            out.cpu_ns = None if usage is None else usage * 1000
            out.throttled_ns = None if throttled is None else throttled * 1000
            out.throttled_periods = stat.get("nr_throttled")
            out.io = _iostat(self._dir("io") / "io.stat")
        if with_tasks:
            out.tasks = task_waits(self.tasks())
        return out

    def release(self, wait: float = 5.0) -> list[str]:
        """Move what is left in the group to tdebench's own group and remove it; the paths it could not remove."""
        return [str(path) for path in self.paths if not remove_group(path, wait)]


def remove_group(path: Path, wait: float = 5.0) -> bool:
    """Move the tasks still in cgroup ``path`` to its parent, then remove it (retrying while tasks exit); True
    once it is gone. Only ``tdebench-*`` directories under a cgroup mount are touched."""
    if not is_ours(path):
        return False
    thaw(path)
    deadline = time.monotonic() + wait
    while path.exists():
        for name, parent_file in (("tasks", "tasks"), ("cgroup.procs", "cgroup.procs")):
            for tid in _ints(path / name):
                _write(path.parent / parent_file, str(tid))
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
    return True


def thaw(path: Path) -> None:
    """Let a frozen group's tasks run again (``--schedule turns``): a v1 freezer group or a v2 group; a group
    that is not frozen, or gone, is left as it is."""
    for name, text in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
        if (path / name).exists():
            _write(path / name, text)


def is_ours(path: Path) -> bool:
    """True for a ``tdebench-*`` directory inside a mounted cgroup hierarchy (what cleanup may remove)."""
    path = Path(os.path.abspath(path))
    if not path.name.startswith(PREFIX):
        return False
    return any(path.is_relative_to(point) and path != point for _, point, _, _ in mounts())


def _keyed(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if value.strip().lstrip("-").isdigit():
                out[key] = int(value)
    except OSError:
        pass
    return out


def _blkio(directory: Path) -> dict[str, list[int]] | None:
    """v1: per device [read bytes, written bytes, read requests, write requests] (the throttle layer sees every
    request, whatever the I/O scheduler); None when neither file can be read."""
    out: dict[str, list[int]] | None = None
    for name, offset in (("blkio.throttle.io_service_bytes", 0), ("blkio.throttle.io_serviced", 2)):
        try:
            lines = (directory / name).read_text().splitlines()
        except OSError:
            continue
        out = {} if out is None else out
        for line in lines:
            parts = line.split()
            if len(parts) == 3 and parts[1] in ("Read", "Write"):
                row = out.setdefault(parts[0], [0, 0, 0, 0])
                row[offset + (parts[1] == "Write")] = int(parts[2])
    return out


def _iostat(path: Path) -> dict[str, list[int]] | None:
    """v2: ``io.stat`` per device as [rbytes, wbytes, rios, wios]; None when it cannot be read."""
    out: dict[str, list[int]] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        device, *pairs = line.split()
        values = dict(p.split("=", 1) for p in pairs if "=" in p)
        out[device] = [int(values.get(k, 0)) for k in ("rbytes", "wbytes", "rios", "wios")]
    return out


def delay_accounting() -> bool:
    """Whether the kernel accounts the time tasks wait for block I/O (``kernel.task_delayacct``)."""
    try:
        return DELAYACCT.read_text().strip() == "1"
    except OSError:
        return False


def task_waits(tids: list[int]) -> dict[int, tuple[int, int]]:
    """tid -> (ns it waited for a CPU, from ``schedstat``; clock ticks it waited for block I/O, field 42 of its
    ``stat``, or -1 when delay accounting is off). Tasks that exited are left out."""
    blkio = delay_accounting()
    out: dict[int, tuple[int, int]] = {}
    for tid in tids:
        try:
            run_delay = int(Path(f"/proc/{tid}/schedstat").read_text().split()[1])
            ticks = -1
            if blkio:
                stat = Path(f"/proc/{tid}/stat").read_text()
                ticks = int(stat[stat.rindex(")") + 2:].split()[39])
        except (OSError, ValueError, IndexError):
            continue
        out[tid] = (run_delay, ticks)
    return out


def used_between(before: GroupReading, after: GroupReading,
                 devices: set[str] | frozenset[str] | None) -> dict[str, float]:
    """What the group waited on and used between two readings: ``cpu_wait`` and ``io_wait`` (s, summed over its
    tasks; a task that started in between counts from 0), ``cgroup_cpu`` and ``throttled`` (s),
    ``throttled_periods``, and ``read_bytes``, ``write_bytes``, ``read_ios`` of ``devices`` (None: all)."""
    if isinstance(devices, str):  # "254:0" would match "54:0" as a substring
        raise TypeError("used_between takes a set of devices, not one device's name")
    out: dict[str, float] = {}
    cpu_wait, io_ticks, accounted = 0, 0, False
    for tid, (delay, ticks) in after.tasks.items():
        old = before.tasks.get(tid, (0, 0))
        cpu_wait += max(0, delay - old[0])
        if ticks >= 0 and old[1] >= 0:
            accounted, io_ticks = True, io_ticks + max(0, ticks - old[1])
    out["cpu_wait"] = cpu_wait / 1e9
    if accounted:
        out["io_wait"] = io_ticks / os.sysconf("SC_CLK_TCK")
    for key, a, b, scale in (("cgroup_cpu", before.cpu_ns, after.cpu_ns, 1e9),
                             ("throttled", before.throttled_ns, after.throttled_ns, 1e9),
                             ("throttled_periods", before.throttled_periods, after.throttled_periods, 1)):
        if a is not None and b is not None:
            out[key] = max(0, b - a) / scale
    if after.io is not None and before.io is not None:  # a group that read nothing read 0 bytes
        picked = [d for d in after.io if devices is None or d in devices]
        for key, index in (("read_bytes", 0), ("write_bytes", 1), ("read_ios", 2)):
            out[key] = float(sum(max(0, after.io[d][index] - before.io.get(d, [0, 0, 0, 0])[index])
                                 for d in picked))
    return out


def device_of(path: Path) -> str | None:
    """"MAJ:MIN" of the block device holding ``path`` (a partition: its disk's), None when it is on none (FUSE,
    tmpfs: its reads are counted on every device then)."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    name = f"{os.major(dev)}:{os.minor(dev)}"
    return name if Path(f"/sys/dev/block/{name}").exists() else None


def io_weight_facts(device: str | None, version: str) -> dict[str, object]:
    """The equal I/O weight and whether ``device``'s I/O scheduler shares the device by weight at all (BFQ, or
    cgroup v2's io.cost); a scheduler that does not serves both twins' requests in arrival order."""
    facts: dict[str, object] = {"io_weight": IO_WEIGHT, "device": device}
    if device is None:
        return facts
    queue = Path(f"/sys/dev/block/{device}/queue")
    if not queue.exists():
        queue = Path(f"/sys/dev/block/{device}/../queue")
    try:
        text = (queue / "scheduler").read_text()
        scheduler = text[text.index("[") + 1:text.index("]")] if "[" in text else text.strip()
    except (OSError, ValueError):
        scheduler = "unknown"
    facts["io_scheduler"] = scheduler
    cost = False
    if version == "2":
        for root in (ROOT, ROOT / "unified"):
            try:
                cost = cost or any(line.startswith(device) and "enable=1" in line
                                   for line in (root / "io.cost.qos").read_text().splitlines())
            except OSError:
                continue
    facts["io_weight_honoured"] = scheduler == "bfq" or cost
    return facts
