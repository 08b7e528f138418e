#!/usr/bin/env python3
"""Do a plain and a TDE MariaDB twin choose the same plans for the 22 TPC-H queries, ANALYZE after ANALYZE? (#14)

    python benchmarks/twin_plans.py [--sf 0.1] [--rounds 6] [--setting KEY=VALUE ...]

Creates a plain twin and a ``tde:aes-256-ctr`` twin with tdebench's MariaDB settings (``--setting`` overrides
one, e.g. ``--setting innodb_stats_persistent_sample_pages=20 --setting innodb_stats_auto_recalc=ON`` for
MariaDB's own defaults), loads the same TPC-H data into both, then ``--rounds`` times: ``ANALYZE TABLE`` of the
eight tables on both twins, and ``EXPLAIN`` of every query on both. Prints per round how many queries got a
different plan (join order, access type, key) on the two twins, and how many a different EXPLAIN output at all
(the row estimates included), naming them. docs/precision.md quotes it ("Twins must choose the same plans").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tdebench.api.engine import Config, Instance  # noqa: E402
from tdebench.encryption import PLAIN, parse_spec  # noqa: E402
from tdebench.engines import get_engine  # noqa: E402
from tdebench.workloads.tpch import params, schema  # noqa: E402
from loaded_twins import loaded_twins  # noqa: E402 - beside this script

ROWS = 8  # the row estimate in MariaDB's EXPLAIN output (id, select_type, table, type, possible_keys, key,
#           key_len, ref, rows, Extra): left out of the plan shape


def explain_all(twin: Instance, sf: float) -> dict[int, list[tuple[Any, ...]]]:
    """Query number -> its EXPLAIN rows (other statements of a query, e.g. q15's view, are executed)."""
    conn = twin.connect()
    out: dict[int, list[tuple[Any, ...]]] = {}
    try:
        cur = conn.cursor()
        for table in schema.TABLES:
            cur.execute(f"ANALYZE TABLE {table.name}")
            cur.fetchall()
        for q in range(1, 23):
            out[q] = []
            for statement in (s.strip() for s in params.render_query(q, "mariadb", sf).split(";") if s.strip()):
                if statement.upper().startswith(("SELECT", "WITH")):
                    cur.execute(f"EXPLAIN {statement}")
                    out[q] += [tuple(row) for row in cur.fetchall()]
                else:
                    cur.execute(statement)
        conn.commit()
    finally:
        conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--setting", action="append", default=[], help="KEY=VALUE server setting of both twins")
    args = parser.parse_args()
    settings = {**get_engine("mariadb").default_settings(), **dict(s.split("=", 1) for s in args.setting)}
    configs = [Config("mariadb", spec, dict(settings)) for spec in (PLAIN, parse_spec("tde:aes-256-ctr"))]
    with loaded_twins(configs, args.sf, "twin-plans-", "plain and TDE twins") as twins:
        for n in range(1, args.rounds + 1):
            plain, tde = (explain_all(twin, args.sf) for twin in twins)
            shape = [q for q in plain if [r[:ROWS] + r[ROWS + 1:] for r in plain[q]] !=
                     [r[:ROWS] + r[ROWS + 1:] for r in tde[q]]]
            output = [q for q in plain if plain[q] != tde[q]]
            print(f"round {n}: {len(shape)} of 22 queries with different plans {shape or ''}; "
                  f"{len(output)} with different EXPLAIN output {output or ''}", flush=True)


if __name__ == "__main__":
    main()
