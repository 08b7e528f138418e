#!/usr/bin/env python3
"""What a key server costs where it is asked: start-up, restart, the first query after a restart, and a key fetch
(docs/key-management.md).

    python benchmarks/keyserver_costs.py [--rounds 12] [--rows 200000] [--fetches 200]

Starts a private OpenBao (as ``--keys openbao`` does) and two MariaDB twins with ``tde:aes-256-cbc``: one with its
keys in the key file (``file``), one taking them from the key server (``openbao``). Both get the same table of
``--rows`` rows. Then ``--rounds`` rounds, the twins in a fresh random order each round:

* **restart**: stop, then start until the server answers (the key server twin's plugin fetches its keys at
  start-up; the file twin decrypts its key file with the file key);
* **first query**: a full scan of the table right after that start (cold buffer pool, and a cold key cache for
  the key server twin), and the same scan again (warm);

and ``--fetches`` key fetches by tdebench itself (one HTTPS request each, as SQLCipher, SQLite3MC, DuckDB and
pgcrypto configs make at every open), against reading the key from memory.

Prints per measure the medians of both twins and the key server twin against the file twin: the geometric mean of
the per-round ratios with its 95% t interval (paired by round). Heavy: run it alone, on a machine that does
nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tdebench.api.engine import Config, Instance  # noqa: E402
from tdebench.api.keys import FILE, OPENBAO  # noqa: E402
from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import get_engine  # noqa: E402
from tdebench.runner.keyserver.bao import PrivateOpenBao  # noqa: E402
from tdebench.stats.paired import paired_ratio  # noqa: E402

SPEC = parse_spec("tde:aes-256-cbc")
SCAN = "SELECT COUNT(*), SUM(LENGTH(pad)) FROM t"


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def scan(instance: Instance) -> None:
    conn = instance.connect()
    try:
        cur = conn.cursor()
        cur.execute(SCAN)
        cur.fetchall()
    finally:
        conn.close()


def fill(instance: Instance, rows: int) -> None:
    conn = instance.connect()
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(200)) ENGINE=InnoDB")
        cur.execute(f"INSERT INTO t SELECT seq, REPEAT(MD5(seq), 6) FROM seq_1_to_{rows}")
        conn.commit()
    finally:
        conn.close()


def report(name: str, values: dict[str, list[float]], unit: str = "s") -> None:
    ratio = paired_ratio(values[FILE], values[OPENBAO])
    med = {k: statistics.median(v) for k, v in values.items()}
    ci = (f"{(ratio.low - 1) * 100:+.1f}% to {(ratio.high - 1) * 100:+.1f}%"
          if ratio and ratio.low is not None and ratio.high is not None else "no interval")
    spread = "  ".join(f"{k} {min(v):.4f}-{max(v):.4f}" for k, v in values.items())
    print(f"{name:<28} median: file {med[FILE]:.4f} {unit}, openbao {med[OPENBAO]:.4f} {unit}; "
          f"openbao/file {(ratio.mean - 1) * 100 if ratio else float('nan'):+.1f}% (geometric mean of the rounds' "
          f"ratios, 95% CI {ci}, n = {ratio.n if ratio else 0}); range {spread}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--fetches", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tdebench-keycosts-"))
    work.chmod(0o711)
    engine = get_engine("mariadb")
    bao = PrivateOpenBao(work / "keyserver")
    twins: dict[str, Instance] = {}
    try:
        ready = timed(bao.start)
        print(f"key server ready in {ready:.2f} s ({bao.started_s})", flush=True)
        for source in (FILE, OPENBAO):
            config = Config("mariadb", SPEC, engine.default_settings(), keys=source)
            twins[source] = engine.create_instance(config, work)
            if source == OPENBAO:
                path = engine.key_path(SPEC)
                assert path is not None
                twins[source].take_keys(bao.provision(config.label, path.needs))
            twins[source].start()
            fill(twins[source], args.rows)
        measures = {m: {FILE: [], OPENBAO: []} for m in ("restart (stop + start)", "start", "first scan after start",
                                                          "second scan")}
        rng = random.Random(39)
        for _ in range(args.rounds):
            for source in rng.sample([FILE, OPENBAO], 2):
                twin = twins[source]
                stop = timed(twin.stop)
                start = timed(twin.start)
                measures["restart (stop + start)"][source].append(stop + start)
                measures["start"][source].append(start)
                measures["first scan after start"][source].append(timed(lambda: scan(twin)))
                measures["second scan"][source].append(timed(lambda: scan(twin)))
        print(f"{args.rounds} rounds, {args.rows} rows, twins in a random order each round:")
        for name, values in measures.items():
            report(name, values)
        access = twins[OPENBAO].key_access
        assert access is not None
        fetches = sorted(timed(lambda: access.fetch(1)) for _ in range(args.fetches))
        p95 = fetches[int(0.95 * (len(fetches) - 1))]
        print(f"{'key at an open (fetch)':<28} file: in memory  openbao: median "
              f"{statistics.median(fetches) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
              f"per fetch (n = {len(fetches)}; one HTTPS request with a new TLS session)", flush=True)
        print(f"key server requests served: {bao.reads()}")
    finally:
        for twin in twins.values():
            twin.destroy()
        bao.destroy()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
