#!/usr/bin/env python3
"""Would an I/O rate bound make reads from the disk steady without hiding what encryption adds to each read?

A reader like a server missing its buffer pool: 16-KiB O_DIRECT preads at random page offsets of a file on the
disk, one at a time, each followed by ``--work-us`` microseconds of CPU (a stand-in for decrypting the page: InnoDB
decrypts 16 KiB in about 16 us at 1 GB/s), or by none. Each measurement is ``--reads`` such reads in a cgroup of
its own whose read IOPS are bounded to one of ``--limits`` (0: no bound; cgroup v1 ``blkio.throttle.
read_iops_device``, v2 ``io.max riops``), every (bound, work) cell once per repetition in a fresh random order.

Prints per bound: the time per read without and with the work (mean, and its coefficient of variation over the
repetitions: how steady the reads are), and the time the work added per read, paired by repetition, with a 95%
interval and as a share of the work itself (100%: every microsecond of CPU shows in the read time; 0%: the bound
hides it). Root only (it makes cgroups).

    python benchmarks/io_bound.py [--mib 512] [--reads 2000] [--reps 30] [--work-us 20] [--limits 0,2000,5000]
                                  [--dir DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pagefile import PAGE, read_direct, write_random  # noqa: E402  (a sibling module)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.runner import cgroups  # noqa: E402
from tdebench.stats.tdist import paired  # noqa: E402



def spin(ns: int) -> None:
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def read_pages(path: Path, pages: int, reads: int, work_ns: int, rng: random.Random) -> float:
    """Seconds per read of ``reads`` random O_DIRECT page reads, each followed by ``work_ns`` of CPU."""
    offsets = [rng.randrange(pages) * PAGE for _ in range(reads)]
    return read_direct(path, offsets, (lambda: spin(work_ns)) if work_ns else None) / reads


def bound(group: cgroups.TwinGroup, device: str, iops: int) -> None:
    """Set (``iops`` > 0) or lift the group's read IOPS bound on ``device``."""
    if group.hier.version == "1":
        (group.hier.dirs["blkio"] / group.name / "blkio.throttle.read_iops_device").write_text(f"{device} {iops}")
    else:
        (group.hier.dirs["io"] / group.name / "io.max").write_text(f"{device} riops={iops or 'max'}")


def all_cpus(parent: Path) -> str:
    """The CPUs of the parent cpuset (every CPU the reader may use)."""
    for name in ("cpuset.effective_cpus", "cpuset.cpus.effective", "cpuset.cpus"):
        if (parent / name).exists() and (parent / name).read_text().strip():
            return (parent / name).read_text().strip()
    return f"0-{os.cpu_count() - 1}"


def join(group: cgroups.TwinGroup) -> None:
    """Move this thread (v1) or process (v2) into the group."""
    if not (group.add_thread(threading.get_native_id()) or group.add_process(os.getpid())):
        raise SystemExit("could not move this process into its cgroup")


def cv(values: list[float]) -> float:
    return 100 * statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else math.nan


def report(times: dict[tuple[int, int], list[float]], limits: list[int], work_ns: int) -> None:
    print(f"{'bound (IOPS)':>12} {'us/read':>9} {'CV%':>6} {'+work us/read':>14} {'CV%':>6} "
          f"{'added us/read (95% CI)':>26} {'share of the work':>18}")
    for iops in limits:
        plain, worked = times[(iops, 0)], times[(iops, work_ns)]
        test = paired([1e6 * w for w in worked], [1e6 * p for p in plain])
        added = test.estimate
        print(f"{iops or 'none':>12} {1e6 * statistics.fmean(plain):>9.1f} {cv(plain):>6.2f} "
              f"{1e6 * statistics.fmean(worked):>14.1f} {cv(worked):>6.2f} "
              f"{f'{added:+.1f} ({test.low:+.1f} to {test.high:+.1f})':>26} "
              f"{100 * added / (work_ns / 1000):>17.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=512)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--work-us", type=float, default=20.0)
    parser.add_argument("--limits", default="0,2000,5000")
    parser.add_argument("--dir", default=None, help="a directory on the disk to measure (default: the temp dir)")
    args = parser.parse_args()
    limits = [int(x) for x in args.limits.split(",")]
    work_ns = int(args.work_us * 1000)
    if os.geteuid() != 0:
        raise SystemExit("io_bound.py makes cgroups: run it as root")
    with tempfile.TemporaryDirectory(prefix="tdebench-iobound-", dir=args.dir) as tmp:
        path = Path(tmp) / "pages"
        write_random(path, args.mib)
        device = cgroups.device_of(path)
        if device is None:
            raise SystemExit(f"{tmp} is on no block device; pick one with --dir")
        group = cgroups.TwinGroup(f"{cgroups.PREFIX}{os.getpid()}-iobound")
        group.create()
        group.set_cpus(all_cpus(group.hier.dirs["cpuset"]))  # a v1 cpuset takes no task before it has CPUs
        try:
            join(group)
            times = run(group, device, path, args, limits, work_ns)
        finally:
            group.release()
    print(f"device {device}, {args.mib} MiB file, {args.reads} reads per measurement, {args.reps} repetitions, "
          f"work {args.work_us:g} us per read")
    report(times, limits, work_ns)


def run(group: cgroups.TwinGroup, device: str, path: Path, args: argparse.Namespace, limits: list[int],
        work_ns: int) -> dict[tuple[int, int], list[float]]:
    """Every (bound, work) cell once per repetition, in a fresh random order."""
    rng = random.Random(7)
    cells = [(iops, work) for iops in limits for work in (0, work_ns)]
    times: dict[tuple[int, int], list[float]] = {cell: [] for cell in cells}
    pages = args.mib * (1 << 20) // PAGE
    for rep in range(args.reps):
        rng.shuffle(cells)
        for iops, work in cells:
            bound(group, device, iops)
            times[(iops, work)].append(read_pages(path, pages, args.reads, work, rng))
        print(f"rep {rep + 1}/{args.reps}", file=sys.stderr, flush=True)
    bound(group, device, 0)
    return times


if __name__ == "__main__":
    main()
