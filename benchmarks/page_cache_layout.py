"""How the OS page cache's layout of a file changes the cost of reading it through the cache.

Two files of the same size are cached differently: one read sequentially in 1-MiB chunks (as tdebench fills the
page cache for ``--page-source memory``), the other page by page in random order. Each is then read whole in 16-KiB
preads (InnoDB's page size, as a server reads what its buffer pool misses), alternately, ``--reps`` times. Prints
each file's share of cached pages in large folios (root only) and the read time of the first against the second,
with a 95% interval over the repetitions; with ``--redraw N`` both files are evicted and cached again the same way
N times, which shows whether the layout a sequential read gets differs from one caching to the next.

    python benchmarks/page_cache_layout.py [--mib 256] [--reps 40] [--redraw 0] [--dir DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pagefile import write_random  # noqa: E402  (a sibling module)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.engines.toolkit import memcap, pagecache  # noqa: E402

CHUNK = 16384


def cache_page_by_page(path: Path, size: int) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        offsets = list(range(0, size, 4096))
        random.Random(1).shuffle(offsets)
        for offset in offsets:
            os.pread(fd, 4096, offset)
    finally:
        os.close(fd)


def read_time(path: Path, size: int) -> float:
    buffer = memoryview(bytearray(CHUNK))
    fd = os.open(path, os.O_RDONLY)
    try:
        began = time.perf_counter()
        for offset in range(0, size, CHUNK):
            os.preadv(fd, [buffer], offset)
        return time.perf_counter() - began
    finally:
        os.close(fd)


def compare(first: Path, second: Path, size: int, reps: int) -> tuple[float, float]:
    """Mean log ratio (%) of the first file's read time to the second's, and its 95% half-width."""
    logs = [100 * math.log(read_time(first, size) / read_time(second, size)) for _ in range(reps + 2)][2:]
    return statistics.fmean(logs), 1.96 * statistics.stdev(logs) / math.sqrt(len(logs))


def share(path: Path) -> str:
    value = pagecache.large_folio_share(path.parent)
    return "unknown (not root)" if value is None else f"{value:.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--redraw", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="where the two files go (default: a temp directory)")
    args = parser.parse_args()
    size = args.mib << 20
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        seq, scattered = Path(tmp, "sequential"), Path(tmp, "scattered")
        for path in (seq, scattered):
            path.mkdir()
            write_random(path / "data", size >> 20, sync=False)
        memcap.evict_files(Path(tmp))
        memcap.cache_files(seq)
        cache_page_by_page(scattered / "data", size)
        mean, half = compare(seq / "data", scattered / "data", size, args.reps)
        print(f"large folios: sequentially cached {share(seq / 'data')}, page by page {share(scattered / 'data')}")
        print(f"read time, sequentially cached / page by page: {math.exp(mean / 100):.3f}× "
              f"(log ratio {mean:+.2f}% ± {half:.2f}, {args.reps} reps of {args.mib} MiB in 16-KiB preads)")
        for draw in range(args.redraw):
            memcap.evict_files(Path(tmp))
            for path in (seq, scattered)[:: 1 if draw % 2 else -1]:
                memcap.cache_files(path)
            mean, half = compare(seq / "data", scattered / "data", size, args.reps)
            print(f"redraw {draw + 1}: both cached sequentially: first/second {mean:+.2f}% ± {half:.2f} "
                  f"(large folios {share(seq / 'data')}, {share(scattered / 'data')})")


if __name__ == "__main__":
    main()
