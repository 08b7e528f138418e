#!/usr/bin/env python3
"""How long the TPC-C consistency check takes, per statement, with and without the history index.

    python benchmarks/tpcc_consistency.py [--engine mariadb|postgres|sqlite] [--spec none] [--warehouses 1]
                                          [--transactions 2000] [--repeat 2] [--explain]
                                          [--workdir /var/tmp/tdebench-consistency] [--data-dir DIR]
                                          [--server-setting KEY=VALUE ...]

One private instance (engine defaults plus ``--server-setting``) is loaded with the TPC-C population of
``--warehouses``, then one session runs ``--transactions`` transactions of the standard mix (45% New-Order,
43% Payment, 4% each of the others, so about one in 25 is a Delivery of ten orders) with the workload's
default mode (procedures on MariaDB/PostgreSQL). Then the check
(``tdebench.workloads.tpcc.consistency.check``) runs ``--repeat`` times, followed by each of its statements
alone; then the history index is dropped and the same is timed again (PostgreSQL, which tdebench loads
without that index, gets it for the second round instead; not possible under pgcrypto column encryption).
Printed: seconds (the best of ``--repeat``), rows returned and the violations found (all must be 0).
``--explain`` prints the plan of each statement.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import Config, get_engine  # noqa: E402
from tdebench.workloads.tpcc import consistency, schema  # noqa: E402
from tdebench.workloads.tpcc.datagen import ensure_data  # noqa: E402
from tdebench.workloads.tpcc.loader import load_tpcc  # noqa: E402
from tdebench.workloads.tpcc.procs import resolve_mode  # noqa: E402
from tdebench.workloads.tpcc.rand import C_LAST_RUN, TpccRandom  # noqa: E402
from tdebench.workloads.tpcc.session import Session  # noqa: E402
from tdebench.workloads.tpcc.txns import DELIVERY, MIX, Terminal, draw  # noqa: E402
from tdebench.workloads.tpcc.vu import execute  # noqa: E402


# the HISTORY part of condition 10 alone (HAVING drops every row: only the server's work is timed)
HISTORY_SUMS = ("SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id "
                "HAVING SUM(h_amount) < 0")


def run_transactions(instance, dialect, warehouses: int, count: int) -> dict[str, int]:
    """``count`` transactions of the standard mix, terminals round-robin over the warehouses."""
    session = Session(instance.connect(), dialect, procedures=resolve_mode("auto", dialect) == "procedures")
    rng = TpccRandom(77, c_last=C_LAST_RUN)
    deck = [kind for kind, cards in MIX.items() for _ in range(cards)]
    done: dict[str, int] = {}
    try:
        for i in range(count):
            if i % len(deck) == 0:
                rng.rng.shuffle(deck)
            kind = deck[i % len(deck)]
            terminal = Terminal(i % warehouses + 1, warehouses)
            outcome, _ = execute(session, terminal, draw(kind, rng, terminal), {}, 50)
            done[f"{kind} {outcome}"] = done.get(f"{kind} {outcome}", 0) + 1
    finally:
        session.close()
    return done


def best_of(repeat: int, action) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - started)
    return best, result


def time_check(instance, repeat: int, explain: bool, family: str) -> None:
    conn = instance.connect()
    try:
        seconds, found = best_of(repeat, lambda: consistency.check(conn))
        total = sum(v.count for v in found.values())
        print(f"  check(): {seconds:.3f} s, violations {total}"
              + ("" if not total else f" {[(k, v.examples[:2]) for k, v in found.items() if v]}"))
        for name, sql in {**consistency.STATEMENTS, "(history per customer, part of balances)": HISTORY_SUMS}.items():
            def one(sql=sql):
                cur = conn.cursor()
                cur.execute(sql)
                rows = cur.fetchall()
                conn.commit()
                return len(rows)
            seconds, rows = best_of(repeat, one)
            print(f"    {name:40} {seconds:8.3f} s  {rows} rows")
            if explain:
                cur = conn.cursor()
                cur.execute(("EXPLAIN QUERY PLAN " if family == "sqlite" else "EXPLAIN ") + sql)
                for row in cur.fetchall():
                    print("        " + " | ".join(str(v) for v in row))
                conn.commit()
    finally:
        conn.close()


def toggle_history_index(instance, family: str) -> str:
    """Drop the history index where the schema made it, create it where not (PostgreSQL); returns what was done."""
    name, table, cols = schema.HISTORY_INDEX
    conn = instance.connect()
    try:
        cur = conn.cursor()
        if family == "postgres":
            cur.execute(f"SELECT 1 FROM pg_indexes WHERE indexname = '{name}'")
            exists = cur.fetchone() is not None
        else:
            exists = True
        if exists:
            cur.execute(f"DROP INDEX {name} ON {table}" if family == "mariadb" else f"DROP INDEX {name}")
            done = "without the history index"
        else:
            try:
                cur.execute(f"CREATE INDEX {name} ON {table} ({', '.join(cols)})")
            except Exception as exc:  # noqa: BLE001 - pgcrypto: HISTORY is a decrypting view over ciphertext
                conn.rollback()
                return f"no second round: {' '.join(str(exc).split())}"
            done = "with the history index (added for this comparison)"
        conn.commit()
        instance.analyze(conn)
        conn.commit()
        return done
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="mariadb", choices=("mariadb", "postgres", "sqlite"))
    ap.add_argument("--spec", default="none")
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--explain", action="store_true")
    ap.add_argument("--workdir", type=Path, default=Path("/var/tmp/tdebench-consistency"))
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--server-setting", action="append", default=[])
    args = ap.parse_args()
    settings = dict(s.split("=", 1) for s in args.server_setting)
    data_dir, facts = ensure_data(args.warehouses, 20240607, args.data_dir)
    args.workdir.mkdir(parents=True, exist_ok=True)
    engine = get_engine(args.engine)
    instance = engine.create_instance(Config(args.engine, parse_spec(args.spec), {**engine.default_settings(),
                                                                                  **settings}), args.workdir)
    dialect = engine.dialect
    try:
        instance.start()
        started = time.perf_counter()
        mode = resolve_mode("auto", dialect)
        load_tpcc(instance, dialect, data_dir, args.warehouses, procedures=mode == "procedures")
        print(f"{args.engine} {engine.version()}, encryption {args.spec}, {args.warehouses} warehouse(s) "
              f"({sum(facts['rows'].values())} rows), loaded in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        done = run_transactions(instance, dialect, args.warehouses, args.transactions)
        deliveries = sum(n for k, n in done.items() if k.startswith(DELIVERY))
        print(f"{args.transactions} transactions ({mode}) in {time.perf_counter() - started:.1f} s, "
              f"{deliveries} Deliveries: {done}")
        print("as loaded" + (" (PostgreSQL: no history index)" if dialect.family == "postgres" else
                             " (with the history index)") + ":")
        time_check(instance, args.repeat, args.explain, dialect.family)
        done = toggle_history_index(instance, dialect.family)
        print(done + ":")
        if not done.startswith("no second round"):
            time_check(instance, args.repeat, args.explain, dialect.family)
    finally:
        instance.destroy()
        shutil.rmtree(args.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
