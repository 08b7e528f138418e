#!/usr/bin/env python3
"""Two identical plain MariaDB twins: how far apart are they, and which way of restarting them removes it (#14)?

    python benchmarks/twin_instances.py [--sf 0.1] [--blocks 12] [--strategies same,each,all]

Creates twins A (first) and B (second) with identical settings and loads the same TPC-H data into both, then runs
the 22 power-test queries block after block, each query on both twins in a fresh random order, and reads each
server's CPU time (per-thread schedstat, as tdebench's step probe does) around every query. Before every block a
strategy is applied, one strategy after the other for ``--blocks`` blocks each:

* ``same``: nothing, the same two server processes throughout;
* ``each``: each twin restarted on its own, A then B, cache given back (dump and load, whole-index reads);
* ``all``: both stopped, then both started, each in a fresh random order, caches given back (what
  ``tdebench run --restart-twins`` does).

Prints, per strategy, B's server CPU time for the 22 queries against A's (mean log-ratio with its standard error
over the blocks, and the per-block sd), and per query for ``same``. A value whose interval excludes 0 is a
difference between two identical twins that pairing cannot remove. Heavy: run it on a machine that does nothing
else meanwhile.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tdebench.api.engine import Config, Instance  # noqa: E402
from tdebench.encryption import PLAIN  # noqa: E402
from tdebench.engines import get_engine  # noqa: E402
from tdebench.measure.proctime import TreeCpu  # noqa: E402
from tdebench.workloads.tpch import params  # noqa: E402
from loaded_twins import loaded_twins  # noqa: E402 - beside this script

QUERIES = list(range(1, 23))


def restart(twins: list[Instance], strategy: str, rng: random.Random) -> None:
    """Apply ``strategy`` before a block."""
    if strategy == "each":
        for twin in twins:
            twin.restart_keeping_cache()
    elif strategy == "all":
        saved = [twin.save_cache() for twin in twins]
        for i in rng.sample(range(len(twins)), len(twins)):
            twins[i].stop()
        order = rng.sample(range(len(twins)), len(twins))
        for i in order:
            twins[i].start()
        for i in order:
            twins[i].load_cache(saved[i])


def block(twins: list[Instance], sf: float, rng: random.Random) -> dict[int, list[float]]:
    """The 22 queries, each on both twins in a random order: query -> server CPU seconds per twin."""
    conns = [t.connect() for t in twins]
    trees = [TreeCpu(t.server_pids) for t in twins]
    out: dict[int, list[float]] = {}
    try:
        for q in QUERIES:
            sql = [s for s in params.render_query(q, "mariadb", sf).split(";") if s.strip()]
            cpu = [0.0, 0.0]
            for i in rng.sample(range(2), 2):
                before = trees[i].read()
                cur = conns[i].cursor()
                for statement in sql:
                    cur.execute(statement)
                    cur.fetchall()
                conns[i].commit()
                cpu[i] = trees[i].seconds_between(before, trees[i].read())
            out[q] = cpu
    finally:
        for conn in conns:
            conn.close()
    return out


def summary(ratios: list[float]) -> str:
    mean = statistics.mean(ratios)
    sd = statistics.stdev(ratios) if len(ratios) > 1 else float("nan")
    se = sd / math.sqrt(len(ratios))
    return f"{100 * mean:+.2f}% ± {100 * 1.96 * se:.2f} (95%), per-block sd {100 * sd:.2f}%, n = {len(ratios)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--blocks", type=int, default=12)
    parser.add_argument("--strategies", default="same,each,all")
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    defaults = get_engine("mariadb").default_settings()
    # same length: same paths but for one letter
    configs = [Config("mariadb", PLAIN, dict(defaults), name=name) for name in ("twin-a", "twin-b")]
    with loaded_twins(configs, args.sf, "twin-instances-", "twins A and B") as twins:
        block(twins, args.sf, rng)  # warm-up
        for strategy in args.strategies.split(","):
            totals, per_query = [], {q: [] for q in QUERIES}
            t0 = time.monotonic()
            for _ in range(args.blocks):
                restart(twins, strategy, rng)
                cpu = block(twins, args.sf, rng)
                totals.append(math.log(sum(c[1] for c in cpu.values()) / sum(c[0] for c in cpu.values())))
                for q, (a, b) in cpu.items():
                    if a > 0 and b > 0:
                        per_query[q].append(math.log(b / a))
            print(f"{strategy:5s} B vs A, server CPU of the 22 queries: {summary(totals)} "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
            if strategy == "same":
                print("      per query: " + ", ".join(
                    f"q{q:02d} {100 * statistics.mean(r):+.1f}" for q, r in per_query.items() if len(r) > 1))


if __name__ == "__main__":
    main()
