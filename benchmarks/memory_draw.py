"""Does a process's speed depend on the memory it was given? A server restarted before every block gets fresh
memory each time; if some allocations are slower to use than others, each restart draws a speed that lasts as long
as the process does, and two twins restarted together draw two.

Each draw maps ``--mib`` MiB of fresh anonymous memory, touches it, and times ``--passes`` passes of random 8-byte
reads over it (TLB- and cache-missing, as a buffer pool's page lookups are); then it unmaps it and waits
``--pause`` seconds (long enough for a free-page-reporting guest to hand the memory back to its host). Printed: each
draw's median pass time, the within-draw CV (pass to pass), and the between-draw sd of the draws' medians, i.e. how
much a fresh allocation's speed varies beyond the pass-to-pass noise. The state of the guest's free page reporting
(``/sys/module/page_reporting``) is printed with it.

    python benchmarks/memory_draw.py [--draws 20] [--mib 256] [--passes 15] [--pause 3]
"""

from __future__ import annotations

import argparse
import math
import mmap
import statistics
import time
from pathlib import Path

import numpy as np

REPORTING = Path("/sys/module/page_reporting/parameters")


def reporting_state() -> str:
    """The guest's free page reporting parameters, or that it has none."""
    if not REPORTING.is_dir():
        return "no free page reporting module"
    return ", ".join(f"{p.name}={p.read_text().strip()}" for p in sorted(REPORTING.iterdir())
                     if p.name in ("page_reporting_order", "min_free_ms", "reported_kib"))


def one_draw(mib: int, passes: int, index: np.ndarray) -> list[float]:
    """Seconds per pass of random reads over freshly mapped memory."""
    size = mib << 20
    area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        words = np.frombuffer(area, dtype=np.uint64)
        words[:] = 1  # touch every page: the faults are not what is timed
        times = []
        for _ in range(passes):
            start = time.perf_counter()
            float(words[index].sum())
            times.append(time.perf_counter() - start)
        del words
        return times
    finally:
        area.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--passes", type=int, default=15)
    ap.add_argument("--reads", type=int, default=2_000_000, help="random reads per pass")
    ap.add_argument("--pause", type=float, default=3.0, help="seconds between draws, memory unmapped")
    args = ap.parse_args()
    index = np.random.default_rng(7).integers(0, (args.mib << 20) // 8, args.reads)
    print(f"free page reporting: {reporting_state()}")
    medians, cvs = [], []
    for draw in range(1, args.draws + 1):
        times = one_draw(args.mib, args.passes, index)
        med = statistics.median(times)
        cv = statistics.stdev(times) / statistics.mean(times)
        medians.append(med)
        cvs.append(cv)
        print(f"draw {draw:2d}: {1e9 * med / args.reads:6.2f} ns per read, within-draw CV {100 * cv:.2f}%",
              flush=True)
        time.sleep(args.pause)
    logs = np.log(medians)
    within = statistics.median(cvs) / math.sqrt(args.passes)  # the noise of one draw's median, roughly
    print(f"between draws: sd of log medians {100 * float(np.std(logs, ddof=1)):.2f}%, range "
          f"{100 * (max(medians) / min(medians) - 1):.1f}%; a median's own noise about {100 * within:.2f}%")
    print(f"free page reporting after: {reporting_state()}")


if __name__ == "__main__":
    main()
