#!/usr/bin/env python3
"""Does one file read slower than another for minutes at a time, when both are read in the same seconds? Does a
read issued from one CPU take longer than the same read issued from another?

    python benchmarks/disk_drift.py [--minutes 4] [--mib 256] [--window 10] [--layout separate|interleaved]
                                    [--chunk-kib 1024] [--dir /var/tmp] [--by file|cpu] [--cpus 0,1]

Two files of ``--mib`` MiB on one filesystem, written either one after the other (``separate``: each file's blocks
together, as two twins' data directories lie after their loads) or chunk by chunk in turn (``interleaved``: the
files' blocks alternate every ``--chunk-kib``). Then, for ``--minutes``, 16-KiB pages at random offsets are read
with ``O_DIRECT`` (past every cache of this machine), one at a time as a server missing its buffer pool does, 100
from one file and 100 from the other in alternating order, over and over. Per window of ``--window`` seconds it
prints each file's mean read time and the log ratio of the second file's over the first's; at the end, the sd of
those log ratios, their lag-1 autocorrelation, and the mean of the first and of the second half of the run. Reads
of both files share every second, so a ratio that stays away from 0 for many windows is a difference between the
files themselves (where their blocks lie), not the disk's latency over time.

``--by cpu`` reads the first file only, 100 pages from each of two CPUs in turn (``--cpus``, the reading thread
moved between them): the log ratio is then the second CPU's read time over the first's. A ratio away from 0 in every
window is the CPU a read is issued from: on a virtual machine whose disk completes its reads with an interrupt on one
CPU, a thread waiting on another CPU is woken a little later. At the end it names the interrupt lines that fired
most during the run and on which CPUs (``/proc/interrupts``), so that the slow and the fast CPU can be told apart.
"""

from __future__ import annotations

import argparse
import math
import mmap
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

PAGE = 16 * 1024


def write_files(directory: Path, mib: int, layout: str, chunk_kib: int) -> list[Path]:
    """The two files, written by ``layout``; each chunk reaches the disk before the next is written."""
    paths = [directory / "first.dat", directory / "second.dat"]
    chunk = chunk_kib * 1024
    buf = mmap.mmap(-1, chunk)
    buf.write(os.urandom(chunk))
    fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600) for p in paths]
    try:
        chunks = mib * 1024 * 1024 // chunk
        order = ([(f, i) for i in range(chunks) for f in (0, 1)] if layout == "interleaved" else
                 [(f, i) for f in (0, 1) for i in range(chunks)])
        for f, i in order:
            os.pwrite(fds[f], buf, i * chunk)
            os.fsync(fds[f])
    finally:
        for fd in fds:
            os.close(fd)
    return paths


def interrupts() -> dict[str, list[int]]:
    """Per interrupt line of ``/proc/interrupts``, its count on each CPU (empty where it cannot be read)."""
    try:
        lines = Path("/proc/interrupts").read_text().splitlines()
    except OSError:
        return {}
    cpus = len(lines[0].split()) if lines else 0
    counts = {}
    for line in lines[1:]:
        fields = line.split()
        if len(fields) > cpus and fields[0].rstrip(":").isdigit():
            counts[" ".join(fields[cpus + 1:]) or fields[0]] = [int(f) for f in fields[1:cpus + 1]]
    return counts


def busiest_lines(before: dict[str, list[int]], after: dict[str, list[int]], top: int = 2) -> list[str]:
    """The ``top`` interrupt lines that fired most between two readings, each with its count per CPU."""
    grown = {name: [a - b for a, b in zip(after[name], before.get(name, [0] * len(after[name])))]
             for name in after}
    ranked = sorted(grown.items(), key=lambda item: -sum(item[1]))[:top]
    return [f"{name}: " + ", ".join(f"CPU{i} {n}" for i, n in enumerate(per_cpu))
            for name, per_cpu in ranked if sum(per_cpu)]


def read_pages(fd: int, pages: int, count: int, rng: random.Random, buf: mmap.mmap) -> float:
    """Seconds for ``count`` random page reads of ``fd``."""
    began = time.perf_counter()
    for _ in range(count):
        os.preadv(fd, [buf], rng.randrange(pages) * PAGE)
    return time.perf_counter() - began


def lag1(values: list[float]) -> float:
    mean = statistics.fmean(values)
    num = sum((a - mean) * (b - mean) for a, b in zip(values, values[1:]))
    den = sum((v - mean) ** 2 for v in values)
    return num / den if den else 0.0


def run(args: argparse.Namespace) -> None:
    directory = Path(tempfile.mkdtemp(prefix="tdebench-drift-", dir=args.dir))
    try:
        paths = write_files(directory, args.mib, args.layout, args.chunk_kib)
        opened = [os.open(p, os.O_RDONLY | os.O_DIRECT) for p in paths]
        fds = opened if args.by == "file" else [opened[0], opened[0]]
        cpus = [int(c) for c in args.cpus.split(",")] if args.by == "cpu" else []
        pages = args.mib * 1024 * 1024 // PAGE
        rng, buf = random.Random(1), mmap.mmap(-1, PAGE)
        ratios: list[float] = []
        ended, irq0, own = time.monotonic() + args.minutes * 60, interrupts(), os.sched_getaffinity(0)
        sides = [f"CPU{c} µs" for c in cpus] or ["first µs", "second µs"]
        what = (f"one file of {args.mib} MiB read from CPU {cpus[0]} and CPU {cpus[1]} in turn" if cpus else
                f"{args.layout}, {args.mib} MiB each, chunk {args.chunk_kib} KiB")
        print(f"{what}, window {args.window} s", flush=True)
        print(f"{'window':>6} {sides[0]:>9} {sides[1]:>10} {'log ratio %':>11}", flush=True)
        while time.monotonic() < ended:
            spent, reads = [0.0, 0.0], [0, 0]
            window_end = time.monotonic() + args.window
            turn = 0
            while time.monotonic() < window_end:
                for f in ((0, 1) if turn % 2 == 0 else (1, 0)):
                    if cpus:
                        os.sched_setaffinity(0, {cpus[f]})
                    spent[f] += read_pages(fds[f], pages, 100, rng, buf)
                    reads[f] += 100
                turn += 1
            means = [spent[f] / reads[f] * 1e6 for f in (0, 1)]
            ratios.append(100 * math.log(means[1] / means[0]))
            print(f"{len(ratios):>6} {means[0]:>9.1f} {means[1]:>10.1f} {ratios[-1]:>+11.2f}", flush=True)
        os.sched_setaffinity(0, own)
        for fd in opened:
            os.close(fd)
        if cpus:
            print("interrupt lines that fired most: " + "; ".join(busiest_lines(irq0, interrupts())))
        half = len(ratios) // 2
        print(f"windows {len(ratios)}: log ratio mean {statistics.fmean(ratios):+.2f}%, sd "
              f"{statistics.stdev(ratios):.2f}%, lag-1 {lag1(ratios):+.2f}; first half {statistics.fmean(ratios[:half]):+.2f}%, "
              f"second half {statistics.fmean(ratios[half:]):+.2f}%")
    finally:
        for path in directory.glob("*"):
            path.unlink()
        directory.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=4.0)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--layout", choices=("separate", "interleaved"), default="separate")
    parser.add_argument("--chunk-kib", type=int, default=1024)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--by", choices=("file", "cpu"), default="file")
    parser.add_argument("--cpus", default="0,1", help="--by cpu: the two CPUs to read from")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
