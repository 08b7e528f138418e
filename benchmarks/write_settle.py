#!/usr/bin/env python3
"""What a write of the sql workload costs beside its untimed undo, with and without the wait for the purge.

    python benchmarks/write_settle.py [--workload-dir docs/examples/orders-sql] [--write new_orders] [--visits 120]

On a private plain MariaDB (tdebench's engine, a temporary directory, 127.0.0.1) loaded with the workload
directory's data, it times one write (its statements in one transaction, committed), its undo and the server's wait
for the purge of what the undo deleted (``SET GLOBAL innodb_max_purge_lag_wait = 0``), 40 times in a row; then
visits of nine executions each, in a random order of four kinds, by what follows every execution: the server's own
wait, tdebench's wait (what the sql workload does: the same wait on connections of its own while the purge's history
length is read every millisecond), 100 ms of idling without any wait, and nothing. It prints each part's median,
mean and sd, and per kind of visit the mean write time, the visits' coefficient of variation, the wall time a visit
took and the share of it the writes were timed. The server is stopped and its
directory removed at the end, also on an error, Ctrl-C or SIGTERM (after a SIGKILL, ``tdebench cleanup`` does it).
"""

from __future__ import annotations

import argparse
import random
import signal
import statistics as st
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import captured_orders  # noqa: E402  (its private MariaDB and its load of a workload directory)

from tdebench.api.dialect import MARIADB  # noqa: E402
from tdebench.workloads.sql.layout import load_workload_dir  # noqa: E402
from tdebench.workloads.sql.settler import Settler  # noqa: E402

WAIT = "SET GLOBAL innodb_max_purge_lag_wait = 0"
RUNS_PER_VISIT = 9


def statements(path: Path) -> list[str]:
    """The statements of one SQL file (comment lines dropped)."""
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def transaction(cur: Any, sql: list[str]) -> float:
    """Seconds to run ``sql`` in one transaction and commit it."""
    started = time.perf_counter()
    cur.execute("BEGIN")
    for statement in sql:
        cur.execute(statement)
    cur.execute("COMMIT")
    return time.perf_counter() - started


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def parts(cur: Any, write: list[str], undo: list[str], rounds: int = 40) -> None:
    """The write, its undo and the purge wait, one after the other."""
    times: dict[str, list[float]] = {"write": [], "undo": [], "purge wait": []}
    for _ in range(rounds):
        times["write"].append(transaction(cur, write))
        times["undo"].append(transaction(cur, undo))
        times["purge wait"].append(timed(lambda: cur.execute(WAIT)))
    for name, values in times.items():
        print(f"{name:<11} median {st.median(values) * 1e3:6.2f} ms  mean {st.mean(values) * 1e3:6.2f} ms  "
              f"sd {st.stdev(values) * 1e3:5.2f} ms")


def visits(cur: Any, conn: Any, inst: Any, write: list[str], undo: list[str], count: int, seed: int) -> None:
    """Visits of nine executions, each execution followed by one of four things: the server's own wait for the
    purge, tdebench's wait (:class:`Settler`: the same wait on connections of its own, the history length read
    every millisecond), 100 ms of idling without any wait, or nothing (each visit starts settled)."""
    rng = random.Random(seed)
    settler = Settler(inst.connect, MARIADB)
    settler.settle(conn)  # its first wait is the server's own, as in a run
    after: dict[str, Callable[[], object]] = {
        "server's wait": lambda: cur.execute(WAIT), "tdebench's wait": lambda: settler.settle(conn),
        "idle 100 ms": lambda: time.sleep(0.1), "nothing": lambda: None}
    means: dict[str, list[float]] = {kind: [] for kind in after}
    walls = dict.fromkeys(means, 0.0)
    cur.execute(WAIT)
    try:
        for _ in range(count):
            kind = rng.choice(list(means))
            started, runs = time.perf_counter(), []
            for _ in range(RUNS_PER_VISIT):
                runs.append(transaction(cur, write))
                transaction(cur, undo)
                after[kind]()
            walls[kind] += time.perf_counter() - started
            means[kind].append(st.mean(runs))
            cur.execute(WAIT)  # untimed: every visit starts from the same state
    finally:
        settler.close()
    for kind, values in means.items():
        if len(values) > 1:
            print(f"then {kind:<16} {len(values):3d} visits  write {st.mean(values) * 1e3:6.2f} ms  "
                  f"cv {st.stdev(values) / st.mean(values) * 100:5.1f}%  wall per visit "
                  f"{walls[kind] / len(values) * 1e3:6.0f} ms  timed {sum(values) * RUNS_PER_VISIT / walls[kind] * 100:4.1f}%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload-dir", type=Path, default=Path("docs/examples/orders-sql"))
    parser.add_argument("--write", default="new_orders", help="the write's name (writes/NAME.sql, NAME.undo.sql)")
    parser.add_argument("--visits", type=int, default=120)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    wd = load_workload_dir(args.workload_dir)
    write = statements(args.workload_dir / "writes" / f"{args.write}.sql")
    undo = statements(args.workload_dir / "writes" / f"{args.write}.undo.sql")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cleaned up as after Ctrl-C
    with captured_orders.source_server(wd, "write-settle", Path.cwd()) as inst:
        conn = inst.connect()
        try:
            cur = conn.cursor()
            parts(cur, write, undo)
            visits(cur, conn, inst, write, undo, args.visits, args.seed)
        finally:
            conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
