#!/usr/bin/env python3
"""Bulk-load speed of TPC-H into MariaDB: tdebench's loader vs the bare ``mariadb`` client, per encryption spec.

    python benchmarks/load_speed_mariadb.py [--sf 1] [--specs none,tde:aes-256-cbc,tde:aes-256-ctr]
                                            [--rounds 1] [--workdir /var/tmp/tdebench-loadspeed]
                                            [--server-setting KEY=VALUE ...]

For every spec and round, two fresh, identically configured instances (engine defaults plus any
``--server-setting``) are loaded with the same ``.tbl`` files:

* ``tdebench``: ``MariadbInstance.bulk_load`` per table (PyMySQL, ``LOAD DATA LOCAL INFILE``);
* ``client``: one ``mariadb`` client process running the same ``LOAD DATA LOCAL INFILE`` statements
  for all tables (its start-up and connection are inside the timing, as a user would see them).

The timed part is the data load only (tables already created, no keys yet); keys/indexes and ANALYZE are
timed for tdebench and printed separately. The files are read once before each load so both sides read
them from the page cache. The order of the two alternates between specs and rounds, so drift hits both.
MB/s is MiB (1024² bytes) of ``.tbl`` input per second; ratio = tdebench MB/s / client MB/s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import Config, get_engine  # noqa: E402
from tdebench.engines.mariadb.engine import MariadbInstance  # noqa: E402
from tdebench.engines.toolkit.bulkload import load_data_sql  # noqa: E402
from tdebench.workloads.tpch import schema  # noqa: E402
from tdebench.workloads.tpch.datagen import ensure_data  # noqa: E402

MIB = 1024 * 1024


def warm(files: list[Path]) -> None:
    for path in files:
        with open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


def new_instance(spec: str, settings: dict[str, str], workdir: Path) -> MariadbInstance:
    engine = get_engine("mariadb")
    inst = engine.create_instance(Config("mariadb", parse_spec(spec), settings), workdir)
    assert isinstance(inst, MariadbInstance)
    inst.start()
    conn = inst.connect()
    try:
        inst.create_schema(conn, schema.create_table_sql("mariadb"))
    finally:
        conn.close()
    return inst


def server_cpu(inst: MariadbInstance) -> float:
    """CPU seconds (user + system) used so far by the instance's server process tree."""
    total = 0.0
    for pid in inst.server_pids():
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tdebench_load(inst: MariadbInstance, data_dir: Path) -> dict[str, float]:
    """Wall, server-CPU and client-CPU seconds of the load through the engine's own bulk_load,
    plus the seconds for keys, indexes and ANALYZE afterwards."""
    conn = inst.connect()
    try:
        cpu0, client0, started = server_cpu(inst), time.process_time(), time.perf_counter()
        for table in schema.TABLES:
            inst.bulk_load(conn, table.name, schema.column_names(table.name), data_dir / f"{table.name}.tbl")
        out = {"wall": time.perf_counter() - started, "server_cpu": server_cpu(inst) - cpu0,
               "client_cpu": time.process_time() - client0}
        started = time.perf_counter()
        inst.create_constraints(conn, schema.constraint_and_index_sql("mariadb"))
        inst.analyze(conn)
        out["keys"] = time.perf_counter() - started
        return out
    finally:
        conn.close()


def client_load(inst: MariadbInstance, data_dir: Path) -> dict[str, float]:
    """Wall, server-CPU and client-CPU seconds of one bare ``mariadb`` client process loading every table."""
    statements = []
    for table in schema.TABLES:
        path = str(data_dir / f"{table.name}.tbl").replace("\\", "\\\\").replace("'", "\\'")
        statements.append(load_data_sql(table.name, schema.column_names(table.name)).replace("%s", f"'{path}'") + ";")
    argv, fd = inst.client_argv()
    try:
        cpu0, client0, started = server_cpu(inst), children_cpu(), time.perf_counter()
        out = subprocess.run(argv + ["--batch", "--show-warnings"], input="\n".join(statements), text=True,
                             pass_fds=[fd], capture_output=True, check=False)
        result = {"wall": time.perf_counter() - started, "server_cpu": server_cpu(inst) - cpu0,
                  "client_cpu": children_cpu() - client0, "keys": float("nan")}
    finally:
        os.close(fd)
    if out.returncode != 0 or out.stdout.strip() or out.stderr.strip():
        raise SystemExit(f"mariadb client load failed ({out.returncode}): {out.stderr.strip() or out.stdout.strip()}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--specs", default="none,tde:aes-256-cbc,tde:aes-256-ctr")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/var/tmp/tdebench-loadspeed"))
    parser.add_argument("--data-dir", type=Path, default=None, help="TPC-H cache root (default: ~/.cache/tdebench)")
    parser.add_argument("--server-setting", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()

    engine = get_engine("mariadb")
    engine.check_available()
    settings = dict(s.split("=", 1) for s in args.server_setting)
    engine.validate_settings(settings)
    specs = [s.strip() for s in args.specs.split(",") if s.strip()]
    for spec in specs:
        engine.validate_spec(parse_spec(spec))
    data_dir, _ = ensure_data(args.sf, args.data_dir) if args.data_dir else ensure_data(args.sf)
    files = [data_dir / f"{t.name}.tbl" for t in schema.TABLES]
    mib = sum(p.stat().st_size for p in files) / MIB
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"{engine.version()}; SF {args.sf:g}: {mib:,.1f} MiB of .tbl; settings: defaults"
          + (f" + {settings}" if settings else "") + f"; {os.cpu_count()} CPUs, load avg {os.getloadavg()[0]:.2f}")
    print(f"{'spec':<18} {'round':>5} {'tdebench MB/s':>14} {'client MB/s':>12} {'ratio':>6} "
          f"{'srv CPU s tdb/cli':>18} {'cli CPU s tdb/cli':>18} {'keys s':>7} {'load avg':>8}")
    ratios: dict[str, list[float]] = {s: [] for s in specs}
    cpu_ratios: dict[str, list[float]] = {s: [] for s in specs}
    started_all = time.perf_counter()
    for rnd in range(args.rounds):
        for index, spec in enumerate(specs):
            results: dict[str, dict[str, float]] = {}
            order = ("tdebench", "client") if (index + rnd) % 2 == 0 else ("client", "tdebench")
            for who in order:
                inst = new_instance(spec, settings, args.workdir)
                try:
                    warm(files)
                    results[who] = tdebench_load(inst, data_dir) if who == "tdebench" else client_load(inst, data_dir)
                finally:
                    inst.destroy()
            ours, theirs = results["tdebench"], results["client"]
            ratio = theirs["wall"] / ours["wall"]
            ratios[spec].append(ratio)
            cpu_ratios[spec].append(theirs["server_cpu"] / ours["server_cpu"])
            print(f"{spec:<18} {rnd + 1:>5} {mib / ours['wall']:>14.1f} {mib / theirs['wall']:>12.1f} {ratio:>6.2f} "
                  f"{ours['server_cpu']:>8.1f}/{theirs['server_cpu']:<9.1f} "
                  f"{ours['client_cpu']:>8.2f}/{theirs['client_cpu']:<9.2f} {ours['keys']:>7.1f} "
                  f"{os.getloadavg()[0]:>8.2f}", flush=True)
    print("median throughput ratio tdebench / bare client (wall): "
          + ", ".join(f"{s} {statistics.median(r):.2f}" for s, r in ratios.items()))
    print("median server-CPU ratio client / tdebench (>1: tdebench's load costs the server less CPU): "
          + ", ".join(f"{s} {statistics.median(r):.2f}" for s, r in cpu_ratios.items()))
    print(f"wall {time.perf_counter() - started_all:.0f} s, load avg at end {os.getloadavg()[0]:.2f}")
    if args.workdir.exists() and not any(args.workdir.iterdir()):
        args.workdir.rmdir()


if __name__ == "__main__":
    main()
