#!/usr/bin/env python3
"""Is the work of completing another process's disk reads charged to the process that happens to run on the CPU
the disk interrupts?

A server's CPU time is read per thread from the kernel (``schedstat``, the time a task ran). On a kernel without
IRQ time accounting (``CONFIG_IRQ_TIME_ACCOUNTING`` unset, as here), an interrupt, and the softirq work run on its
way out, counts as time of whatever task it interrupted. With pages read from the disk a server's reads complete
while its own threads, or its twin's, run; if that work lands on the running task, a server's CPU time carries a
share of the disk's completion work that varies with timing, not with what the server did.

Per CPU of ``--cpus``: a spinner (this process, a fixed pure-Python loop per batch) pinned to that CPU, measured by
its own thread CPU time per batch, first alone, then with a reader process pinned to the same CPU doing 16-KiB
``O_DIRECT`` reads at random offsets of a ``--mib`` MiB file without pause; the rounds alternate (alone, with reads)
``--rounds`` times. The file is unlinked as soon as it is open, and each reader stops when this process is gone, so
that a killed run leaves neither a reading process nor the file behind. Printed per CPU: the spinner's median CPU
time per batch alone and with the reads, the difference in percent and the sd of the per-round differences, and the
reads per second the reader managed; and the interrupt lines that fired most and on which CPUs
(``/proc/interrupts``). A spinner that pays for the reads only on the CPU their interrupts land on is the charge
this script looks for.

    python benchmarks/irq_charge.py [--cpus 0,1] [--rounds 8] [--seconds 3] [--mib 256] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import mmap
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from disk_drift import PAGE, busiest_lines, interrupts  # noqa: E402  (a sibling script)

LOOP = 200_000  # iterations of one batch: about 10 ms of pure Python


def spin_batches(seconds: float) -> list[float]:
    """This thread's CPU seconds per batch of LOOP iterations, over ``seconds`` of wall-clock time."""
    out = []
    ended = time.monotonic() + seconds
    while time.monotonic() < ended:
        began = time.thread_time()
        x = 0
        for i in range(LOOP):
            x += i
        out.append(time.thread_time() - began)
    return out


FORK = mp.get_context("fork")  # a reader inherits the open file, which has no name left to open


def reader(fd: int, cpu: int, stop: mp.Event, count: mp.Value, parent: int) -> None:  # type: ignore[valid-type]
    """Random O_DIRECT page reads of the file open as ``fd`` from ``cpu`` until ``stop`` or until ``parent`` is
    gone; how many in ``count``."""
    os.sched_setaffinity(0, {cpu})
    pages = os.fstat(fd).st_size // PAGE
    buf, rng, done = mmap.mmap(-1, PAGE), random.Random(cpu), 0
    while not stop.is_set() and os.getppid() == parent:
        for _ in range(50):
            os.preadv(fd, [buf], rng.randrange(pages) * PAGE)
        done += 50
    count.value = done


def with_reads(fd: int, cpu: int, seconds: float) -> tuple[list[float], float]:
    """The spinner's batches beside a reader of the O_DIRECT file ``fd`` on the same CPU, and the reader's reads
    per second."""
    stop, count = FORK.Event(), FORK.Value("q", 0)
    proc = FORK.Process(target=reader, args=(fd, cpu, stop, count, os.getpid()))
    proc.start()
    try:
        time.sleep(0.2)  # the reader's first reads are in flight
        batches = spin_batches(seconds)
    finally:
        stop.set()
        proc.join(30)
        if proc.is_alive():
            proc.kill()
    return batches, count.value / (seconds + 0.2)


def write_file(directory: Path, mib: int) -> Path:
    path = directory / "pages.dat"
    chunk = 1024 * 1024
    buf = mmap.mmap(-1, chunk)
    buf.write(os.urandom(chunk))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    try:
        for _ in range(mib):
            os.write(fd, buf)
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def measure_cpu(fd: int, cpu: int, rounds: int, seconds: float) -> None:
    os.sched_setaffinity(0, {cpu})
    alone, beside, diffs, rates = [], [], [], []
    for _ in range(rounds):
        a = statistics.median(spin_batches(seconds))
        batches, rate = with_reads(fd, cpu, seconds)
        b = statistics.median(batches)
        alone.append(a)
        beside.append(b)
        diffs.append(100 * (b / a - 1))
        rates.append(rate)
    print(f"CPU {cpu}: spinner {1e3 * statistics.median(alone):.2f} ms per batch alone, "
          f"{1e3 * statistics.median(beside):.2f} ms beside the reads: {statistics.fmean(diffs):+.2f}% "
          f"(sd over {rounds} rounds {statistics.stdev(diffs):.2f}%); the reader did "
          f"{statistics.fmean(rates):,.0f} reads/s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", default="0,1")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    own = os.sched_getaffinity(0)
    directory = Path(tempfile.mkdtemp(prefix="tdebench-irq-", dir=args.dir))
    try:
        path = write_file(directory, args.mib)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    finally:
        for p in directory.glob("*"):
            p.unlink()
        directory.rmdir()
    try:
        before = interrupts()
        for cpu in (int(c) for c in args.cpus.split(",")):
            measure_cpu(fd, cpu, args.rounds, args.seconds)
        print("interrupt lines that fired most: " + "; ".join(busiest_lines(before, interrupts())))
    finally:
        os.close(fd)
        os.sched_setaffinity(0, own)


if __name__ == "__main__":
    main()
