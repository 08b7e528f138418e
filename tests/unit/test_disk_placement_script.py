"""benchmarks/disk_placement.py: the summary line of a drawing is the log ratios' mean, interval, sd and lag-1."""

from __future__ import annotations

import math
import statistics

from tests.benchscripts import load

placement = load("disk_placement")


def test_a_drawings_summary_gives_the_mean_its_t_interval_the_sd_and_the_lag1():
    logs = [1.0, 2.0, 4.0, 3.0]
    words = placement.summary("drawing 1", logs).replace("(", " ").replace(")", " ").split()
    mean, sd = 2.5, statistics.stdev(logs)
    half = 3.182446305284263 * sd / math.sqrt(4)  # t(0.975, 3)
    dev = [x - mean for x in logs]
    r1 = sum(a * b for a, b in zip(dev[1:], dev)) / sum(x * x for x in dev)
    assert words[2:] == [f"{mean:+.2f}", f"{mean - half:+.2f}", "to", f"{mean + half:+.2f}", "sd", f"{sd:.2f}",
                         "lag-1", f"{r1:+.2f}"]
