#!/usr/bin/env python3
"""Do two identical files on one disk read at the same speed, and does the answer change when they are rewritten?

Two files of the same size are written side by side, then read alternately, ``--reads`` random 16-KiB O_DIRECT
preads at a time (as a server reads what its buffer pool misses), ``--reps`` times, in a fresh random order per
repetition. Prints the log ratio of the second file's read time to the first's, with a 95% interval over the
repetitions and its lag-1 autocorrelation. ``--redraw N`` then writes both files anew (new blocks on the disk, the
old ones freed) N times and measures again: a ratio that holds within a drawing and moves between drawings is an
advantage of where the files lie, which pairing the twins in time cannot remove, and which re-placing the files
turns into noise that varies from drawing to drawing.

    python benchmarks/disk_placement.py [--mib 256] [--reads 2000] [--reps 20] [--redraw 4] [--dir DIR]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pagefile import PAGE, read_direct, write_random  # noqa: E402  (a sibling module)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.stats.sequential import lag1  # noqa: E402
from tdebench.stats.tdist import paired  # noqa: E402



def drawing(first: Path, second: Path, pages: int, args: argparse.Namespace, rng: random.Random) -> list[float]:
    """Per repetition, 100 × log(second's time / first's), each reading the same random pages."""
    out = []
    for _ in range(args.reps):
        offsets = [rng.randrange(pages) * PAGE for _ in range(args.reads)]
        pair = [first, second]
        rng.shuffle(pair)
        times = {path: read_direct(path, offsets) for path in pair}
        out.append(100 * math.log(times[second] / times[first]))
    return out


def summary(label: str, logs: list[float]) -> str:
    test = paired(logs, [0.0] * len(logs))
    return (f"{label:<10} {statistics.fmean(logs):>+7.2f} ({test.low:+.2f} to {test.high:+.2f}) "
            f"sd {statistics.stdev(logs):5.2f}  lag-1 {lag1(logs):+.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--redraw", type=int, default=4)
    parser.add_argument("--dir", default=None, help="a directory on the disk to measure (default: the temp dir)")
    args = parser.parse_args()
    rng = random.Random(11)
    pages = args.mib * (1 << 20) // PAGE
    print(f"{args.mib}-MiB files, {args.reads} random page reads per measurement, {args.reps} repetitions per drawing; "
          "second file against the first, log ratio in % (95% CI)")
    with tempfile.TemporaryDirectory(prefix="tdebench-placement-", dir=args.dir) as tmp:
        first, second = Path(tmp) / "first", Path(tmp) / "second"
        means = []
        for draw in range(args.redraw + 1):
            write_random(first, args.mib)
            write_random(second, args.mib)
            logs = drawing(first, second, pages, args, rng)
            means.append(statistics.fmean(logs))
            print(summary(f"drawing {draw + 1}", logs), flush=True)
    if len(means) > 1:
        print(f"between drawings: sd of the drawings' means {statistics.stdev(means):.2f} points")


if __name__ == "__main__":
    main()
