#!/usr/bin/env python3
"""Client CPU of tdebench's TPC-C driver vs the server's CPU, per New-Order transaction, on MariaDB.

    python benchmarks/driver_overhead.py [--seconds 20] [--warehouses 1] [--spec none] [--vus 1]
                                         [--kind new_order] [--mode procedures|statements]
                                         [--workdir /var/tmp/tdebench-driver]
                                         [--server-setting KEY=VALUE ...]

One private MariaDB instance (engine defaults plus ``--server-setting``) is loaded with the TPC-C
population, then ``--vus`` virtual-user processes (the driver's own code: ``tdebench.workloads.tpcc.vu``,
PyMySQL, one connection each) run only ``--kind`` transactions for ``--seconds`` after a 3-second
warm-up. CPU is read with psutil for both sides over the same window:

* client: user+system CPU of the VU processes (psutil, read by each VU from itself);
* server: user+system CPU of the mariadbd process tree (psutil).

Printed per transaction, side by side, with the ratio client/server. Target: client <= 25% of server.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import Config, get_engine  # noqa: E402
from tdebench.workloads.tpcc.datagen import ensure_data  # noqa: E402
from tdebench.workloads.tpcc.loader import load_tpcc  # noqa: E402
from tdebench.workloads.tpcc.rand import C_LAST_RUN, TpccRandom  # noqa: E402
from tdebench.workloads.tpcc.session import Session  # noqa: E402
from tdebench.workloads.tpcc.txns import KINDS, Terminal, draw  # noqa: E402
from tdebench.lifeline import forked_child  # noqa: E402
from tdebench.workloads.tpcc.vu import adopt_server, execute  # noqa: E402

WARMUP = 3.0
TARGET = 0.25


def server_cpu(pids: list[int]) -> float:
    """user+system seconds of the server tree (children included)."""
    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            procs = [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for p in procs:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
    return total


def vu(instance, kind: str, index: int, warehouses: int, start: float, seconds: float, out,
       procedures: bool) -> None:
    """One virtual user: warm up, then measure its own CPU and transactions over the window."""
    forked_child()
    adopt_server(instance)
    s = Session(instance.connect(), "mariadb", procedures=procedures)
    rng = TpccRandom(1000 + index, c_last=C_LAST_RUN)
    terminal = Terminal(index % warehouses + 1, warehouses)
    retries: dict[str, int] = {}
    me = psutil.Process()
    time.sleep(max(0.0, start - time.monotonic()))
    end_warm, end = start + WARMUP, start + WARMUP + seconds
    count = cpu0 = 0.0
    measuring = False
    while True:
        now = time.monotonic()
        if not measuring and now >= end_warm:
            t = me.cpu_times()
            cpu0, count, measuring = t.user + t.system, 0, True
        if now >= end:
            break
        execute(s, terminal, draw(kind, rng, terminal), retries, 50)
        count += 1
    t = me.cpu_times()
    out.send((count, t.user + t.system - cpu0, sum(retries.values())))
    s.close()


def measure(instance, kind: str, vus: int, warehouses: int, seconds: float,
            procedures: bool) -> tuple[int, float, float, int]:
    """(transactions, client CPU s, server CPU s, retries) over the measured window."""
    ctx = multiprocessing.get_context("fork")
    start = time.monotonic() + 1.0
    pipes, procs = [], []
    for i in range(vus):
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=vu, args=(instance, kind, i, warehouses, start, seconds, send, procedures),
                           daemon=True)
        proc.start()
        pipes.append(recv)
        procs.append(proc)
    time.sleep(max(0.0, start + WARMUP - time.monotonic()))
    server0 = server_cpu(instance.server_pids())
    time.sleep(max(0.0, start + WARMUP + seconds - time.monotonic()))
    server = server_cpu(instance.server_pids()) - server0
    results = [p.recv() for p in pipes]
    for proc in procs:
        proc.join(timeout=30)
    return (sum(r[0] for r in results), sum(r[1] for r in results), server, sum(r[2] for r in results))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--vus", type=int, default=1)
    ap.add_argument("--spec", default="none")
    ap.add_argument("--kind", default="new_order", choices=KINDS)
    ap.add_argument("--mode", default="procedures", choices=("procedures", "statements"))
    ap.add_argument("--workdir", type=Path, default=Path("/var/tmp/tdebench-driver"))
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--server-setting", action="append", default=[])
    args = ap.parse_args()
    settings = dict(s.split("=", 1) for s in args.server_setting)
    data_dir, _ = ensure_data(args.warehouses, 20240607, args.data_dir)
    args.workdir.mkdir(parents=True, exist_ok=True)
    engine = get_engine("mariadb")
    instance = engine.create_instance(Config("mariadb", parse_spec(args.spec), {**engine.default_settings(),
                                                                               **settings}), args.workdir)
    try:
        instance.start()
        procedures = args.mode == "procedures"
        load_tpcc(instance, "mariadb", data_dir, args.warehouses, procedures=procedures)
        count, client, server, retries = measure(instance, args.kind, args.vus, args.warehouses, args.seconds,
                                                 procedures)
    finally:
        instance.destroy()
        shutil.rmtree(args.workdir, ignore_errors=True)
    per_c, per_s = client / count * 1e3, server / count * 1e3
    print(f"MariaDB {engine.version()}, encryption {args.spec}, {args.warehouses} warehouse(s), {args.vus} VU(s), "
          f"{args.kind} only, mode {args.mode}, {args.seconds:g} s measured after {WARMUP:g} s warm-up")
    print(f"transactions: {count}  ({count / args.seconds:.1f}/s, retries {retries})")
    print(f"{'':24}{'client (driver)':>18}{'server (mariadbd)':>20}")
    print(f"{'CPU seconds':24}{client:>18.3f}{server:>20.3f}")
    print(f"{'CPU ms per transaction':24}{per_c:>18.3f}{per_s:>20.3f}")
    ratio = client / server if server else float("inf")
    verdict = "meets" if ratio <= TARGET else "misses"
    print(f"ratio client/server: {ratio:.1%}  ({verdict} the target of <= {TARGET:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
