"""Print this machine's cipher table and what the resource sampler itself costs.

    PYTHONPATH=src python benchmarks/ciphers.py [--seconds 0.3] [--window 10] [--rounds 2] [--procs 20]

Sampler overhead: a tree of ``--procs`` idle processes (a shell and its ``sleep`` children) is watched at 1 Hz.
This process's CPU time (``time.process_time``) over windows of ``--window`` seconds with the sampler running is
compared with windows of the same length without it, alternating (A B A B ...) in the same run; the difference,
scaled to a minute, is the sampler's cost. The per-sample and per-mark costs are measured too (a mark takes one
sample in the caller's thread).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.measure.cipherspeed import REFERENCE, cpu_facts, lookup, measure_ciphers  # noqa: E402
from tdebench.measure.sampler import ResourceSampler  # noqa: E402


def print_ciphers(seconds: float) -> None:
    started = time.perf_counter()
    table = measure_ciphers(seconds)
    took = time.perf_counter() - started
    facts = cpu_facts()
    print(f"Cipher throughput per core, 16 KiB buffers, {seconds} s each ({took:.1f} s wall); "
          f"CPU {facts['cpu_model']}, AES-NI: {facts['aes_ni']}")
    print(f"{'cipher':<18} {'operation':<8} {'MB/s':>9} {'GB/s':>7} {'spread':>7} {'vs ' + REFERENCE:>16}")
    for speed in table:
        ref = lookup(table, REFERENCE, speed.operation) or lookup(table, REFERENCE, "encrypt")
        rel = speed.bytes_per_second / ref.bytes_per_second
        print(f"{speed.name:<18} {speed.operation:<8} {speed.mib_per_second:>9,.0f} {speed.gb_per_second:>7.3f} "
              f"{speed.spread_pct:>6.0f}% {rel:>15.3f}×")
    des = lookup(table, "3DES-CBC", "encrypt").bytes_per_second
    ctr = lookup(table, "AES-256-CTR", "encrypt").bytes_per_second
    print(f"AES-256-CTR / 3DES-CBC (encrypt): {ctr / des:.0f}×\n")


def _tree(procs: int) -> subprocess.Popen:
    script = f"for i in $(seq {procs - 1}); do sleep 600 & done; wait"
    root = subprocess.Popen(["sh", "-c", script])
    deadline = time.time() + 10
    while len(psutil.Process(root.pid).children(recursive=True)) < procs - 1 and time.time() < deadline:
        time.sleep(0.05)
    return root


def _window(seconds: float, pid: int | None) -> tuple[float, float]:
    """(this process's CPU seconds, the sampler's own CPU seconds) over a window, with or without a sampler."""
    cpu0 = time.process_time()
    if pid is None:
        time.sleep(seconds)
        return time.process_time() - cpu0, 0.0
    with ResourceSampler(lambda: [pid], interval=1.0) as sampler:
        time.sleep(seconds)
    series = sampler.stop()
    return time.process_time() - cpu0, series.sampler_cpu_s


def print_sampler_overhead(window: float, rounds: int, procs: int) -> None:
    root = _tree(procs)
    try:
        watched = 1 + len(psutil.Process(root.pid).children(recursive=True))
        base, with_s, own = [], [], []
        for _ in range(rounds):  # interleaved: A B A B
            base.append(_window(window, None)[0])
            cpu, sampler_cpu = _window(window, root.pid)
            with_s.append(cpu)
            own.append(sampler_cpu)
        n = 200
        sampler = ResourceSampler(lambda: [root.pid], interval=3600).start()
        t0 = time.process_time()
        for i in range(n):
            sampler.mark(f"s{i}")
        per_mark = (time.process_time() - t0) / n
        series = sampler.stop()
    finally:
        for child in psutil.Process(root.pid).children(recursive=True):
            child.kill()
        root.kill()
        root.wait()
    per_min = lambda values: statistics.mean(values) / window * 60  # noqa: E731
    overhead = per_min(with_s) - per_min(base)
    print(f"Sampler overhead at 1 Hz watching {watched} processes ({len(psutil.pids())} processes on the host), "
          f"{rounds} × {window:.0f} s windows with and without, interleaved:")
    print(f"  this process, no sampler:   {per_min(base) * 1000:8.1f} ms CPU per minute")
    print(f"  this process, with sampler: {per_min(with_s) * 1000:8.1f} ms CPU per minute")
    print(f"  difference (sampler cost):  {overhead * 1000:8.1f} ms CPU per minute "
          f"= {overhead / 60 * 100:.3f}% of one core")
    print(f"  sampler's own count:        {per_min(own) * 1000:8.1f} ms CPU per minute")
    print(f"  one sample (a mark):        {per_mark * 1000:8.2f} ms CPU "
          f"({series.sampler_cpu_s / len(series.samples) * 1000:.2f} ms by the sampler's own count)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=0.3, help="cipher time budget each (default 0.3)")
    parser.add_argument("--window", type=float, default=10.0, help="seconds per sampler window (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="with/without window pairs (default 2)")
    parser.add_argument("--procs", type=int, default=20, help="processes in the watched tree (default 20)")
    parser.add_argument("--skip-ciphers", action="store_true", help="only the sampler overhead")
    args = parser.parse_args()
    if not args.skip_ciphers:
        print_ciphers(args.seconds)
    print_sampler_overhead(args.window, args.rounds, args.procs)


if __name__ == "__main__":
    main()
