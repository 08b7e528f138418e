#!/usr/bin/env python3
"""How fast tdebench's interval narrows, per schedule, and how often an A/A test cries wolf.

    python benchmarks/precision.py [curves] [--minutes 15] [--cases mariadb,sqlite] [--variants block,query,duet,turns]
                                   [--out DIR] [--data-dir DIR]
    python benchmarks/precision.py fp [--reps 20] [--engine sqlite] [--sf 0.01] [--case tpcc-aa] [--schedule duet]
                                      [--precision 5%] [--trials 10] [--max-trials 40] [--out DIR]
                                      [--restart default|on|off] [--run-args "--duration 20s --warmup 0"]
    python benchmarks/precision.py probe-check [--engine mariadb] [--sf 0.01] [--rounds 3]
    python benchmarks/precision.py show DIR ...

``curves`` (the default) runs ``tdebench run --precision 1% --max-time <minutes>m`` once per case and schedule
variant, each a fresh run including data load, and prints side by side, per comparison, the 95% CI half-width of
the headline overhead (the stopping rule's interval, in percentage points) against elapsed wall-clock minutes
since the run started, for the power total's elapsed time and, in brackets, its server CPU time (paired as tdebench
pairs them: per block, round-paired values as each block's geometric mean over its rounds); then each variant's final
estimate with its interval, whether the variants' intervals overlap (the agreement of two schedules on the same
effect), and the noise each run saw (CV per arm, per-pair log-ratio sd and lag-1 autocorrelation, steal, other
tenants' CPU, load; for the duet, the barrier's skew).
Cases: ``mariadb``: MariaDB SF 0.1 warm, ``none,none,tde:aes-256-ctr`` (the A/A comparison none-2 vs none and
TDE vs none in one run); ``mariadb-aa``: the same with ``none,none`` alone; ``sqlite``: SQLite SF 0.01,
``none,sqlcipher:aes-256-cbc``. Where encryption costs: ``tpcc`` / ``tpcc-aa``: TPC-C on MariaDB, 2
warehouses, 4 virtual users, 30-s steps after a 5-s ramp-up (headline TPM, co-metric server CPU per transaction;
the ``query`` variant is the interleaved slice schedule, paired per round); ``tpcc32-aa``: the A/A test at 3
warehouses and 2 virtual users, in the 10-s steps a ``--precision`` run takes; ``sysbench-aa``: sysbench
oltp_read_write on MariaDB, 2 threads, 100,000-row tables (TPS); ``mem25`` / ``mem25-aa``: TPC-H power on MariaDB
SF 0.1 with the buffer pool at 25% of the loaded data (``--memory-ratio 0.25``), where pages are read and
decrypted. ``memsrc25-aa`` / ``memsrc25-tde``: the same with the misses served from the OS page cache
(``--page-source memory``). ``mariadb-tde``, ``tpcc-tde``, ``mem25-tde``: the TDE comparison alone (two configs, as
the duet schedule needs). Variants: ``block``, ``query`` (servers restarted before every block, the
default), ``duet`` (``--schedule duet``: both twins run each step at the same moment, each in a cgroup with its own
CPUs; two-config cases only, skipped for the others), ``turns`` (``--schedule turns``: the same, the twins
taking turns on the machine; two-config TPC-H cases), ``query-norestart`` (``--no-restart-twins``: the same server processes throughout), ``query+pin``
(``--pin``), ``query-r3``
(``--repeat 3``), ``query+nice`` (``--nice -10``), ``query+pin+nice``.

``fp`` runs ``--reps`` independent A/A runs (``--encryption none,none``, or the A/A case ``--case``, e.g.
``tpcc-aa`` with ``--trials 3 --max-trials 8``; ``orders-aa``: the sql workload's orders example, counted on its
writes and its reads; ``mem25-aa``, ``memsrc25-aa``: on the power total's elapsed time and its server CPU time, and ``mem25-aa`` on
its time at a common wait per page read too)
and counts how many final headline intervals exclude 0 (the false-positive rate at the nominal 5%, with its exact
Clopper–Pearson interval), then whether the rounds of a block share noise (block effect) and whether the blocks of
a run do (run effect: the ANOVA of per-block log ratios by run); ``--restart on|off`` runs them with or without
``--restart-twins``.

``probe-check`` compares the two /proc sources of server CPU time per statement (per-thread schedstat in ns vs
/proc/<pid>/stat in clock ticks) on a real server running the 22 queries ``--rounds`` times.

Heavy: run one benchmark at a time (two on two cores measure each other); runs go to ``--out`` (default
``precision-bench/`` in the current directory) and an interrupted invocation reuses the runs it finished.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from block_ratios import (  # noqa: E402  (a sibling script)
    block_effect as anova_by_block, block_log_ratios, block_values, round_log_ratios, round_logs)

from tdebench.api.regime import ratio_of, regime_label, split_label  # noqa: E402
from tdebench.stats.aa import false_positive_rate  # noqa: E402
from tdebench.stats.load import parse_rows  # noqa: E402
from tdebench.stats.seqinterval import paired_blocks  # noqa: E402
from tdebench.stats.sequential import StoppingRule, lag1  # noqa: E402

_TPCC = ["--engine", "mariadb", "--workload", "tpcc", "--warehouses", "2", "--vus", "4", "--duration", "30s",
         "--rampup", "5s"]
_SYSBENCH = ["--engine", "mariadb", "--workload", "sysbench", "--vus", "2", "--duration", "30s", "--rampup", "5s",
             "--workload-option", "table_size=100000"]
_MEM = ["--engine", "mariadb", "--sf", "0.1", "--memory-ratio", "0.25"]
CASES = {
    "mariadb": ["--engine", "mariadb", "--sf", "0.1", "--encryption", "none,none,tde:aes-256-ctr"],
    "mariadb-aa": ["--engine", "mariadb", "--sf", "0.1", "--encryption", "none,none"],
    "sqlite": ["--engine", "sqlite", "--sf", "0.01", "--encryption", "none,sqlcipher:aes-256-cbc"],
    # where encryption costs (OLTP, memory-bound reads)
    "tpcc": [*_TPCC, "--encryption", "none,none,tde:aes-256-ctr"],
    "tpcc-aa": [*_TPCC, "--encryption", "none,none"],
    # a setting other than the one above, with the 10-s steps a --precision run takes
    "tpcc32-aa": ["--engine", "mariadb", "--workload", "tpcc", "--warehouses", "3", "--vus", "2", "--duration", "10s",
                  "--rampup", "5s", "--encryption", "none,none"],
    "sysbench-aa": [*_SYSBENCH, "--encryption", "none,none"],
    "mem25": [*_MEM, "--encryption", "none,none,tde:aes-256-ctr"],
    "mem25-aa": [*_MEM, "--encryption", "none,none"],
    # two configs each, for the duet schedule: the TDE comparisons alone
    "mariadb-tde": ["--engine", "mariadb", "--sf", "0.1", "--encryption", "none,tde:aes-256-ctr"],
    "tpcc-tde": [*_TPCC, "--encryption", "none,tde:aes-256-ctr"],
    "mem25-tde": [*_MEM, "--encryption", "none,tde:aes-256-ctr"],
    # the same buffer pool with its misses served from the OS page cache instead of the disk
    "memsrc25-aa": [*_MEM, "--page-source", "memory", "--encryption", "none,none"],
    "memsrc25-tde": [*_MEM, "--page-source", "memory", "--encryption", "none,tde:aes-256-ctr"],
    # the user's own workload: the orders example of the sql workload, its statements interleaved in visits
    "orders-aa": ["--engine", "mariadb", "--workload", "sql", "--workload-dir", str(ROOT / "docs/examples/orders-sql"),
                  "--encryption", "none,none"],
}
#: (test, step, metric) of each case's headline, and of the figure shown beside it: its CPU co-metric (the sql
#: workload records none: orders-aa shows its second headline, the reads)
HEADLINES = {
    **{c: (("power", "total", "elapsed"), ("power", "total", "server_cpu"))
       for c in ("mariadb", "mariadb-aa", "mariadb-tde", "sqlite", "mem25", "mem25-aa", "mem25-tde", "memsrc25-aa",
                 "memsrc25-tde")},
    **{c: (("tpcc", "vu4", "tpm"), ("tpcc", "vu4", "server_cpu_per_txn")) for c in ("tpcc", "tpcc-aa", "tpcc-tde")},
    "tpcc32-aa": (("tpcc", "vu2", "tpm"), ("tpcc", "vu2", "server_cpu_per_txn")),
    "sysbench-aa": (("oltp_read_write", "vu2", "tps"), ("oltp_read_write", "vu2", "server_cpu_per_txn")),
    "orders-aa": (("sql", "writes", "elapsed"), ("sql", "reads", "elapsed")),
}
#: fp: every headline a case's A/A runs are counted on (default: the first of HEADLINES); memory-bound TPC-H
#: both, as the waiting for the disk and the CPU of every page read are what its noise and TDE's cost are made of,
#: and with pages from the disk the time at a common wait per page read too (runs that recorded it)
FP_HEADLINES = {**{c: HEADLINES[c] for c in ("orders-aa", "memsrc25-aa")},
                "mem25-aa": (*HEADLINES["mem25-aa"], ("power", "total", "at_common_wait"))}
VARIANTS = {"block": ["--schedule", "block"], "query": ["--schedule", "query"], "duet": ["--schedule", "duet"],
            "turns": ["--schedule", "turns"],
            "query-norestart": ["--schedule", "query", "--no-restart-twins"],
            "query+pin": ["--schedule", "query", "--pin"], "query-r3": ["--schedule", "query", "--repeat", "3"],
            "query+nice": ["--schedule", "query", "--nice", "-10"],
            "query+pin+nice": ["--schedule", "query", "--pin", "--nice", "-10"]}
RULE = StoppingRule(1.0)


def configs_of(case: str) -> int:
    """How many configs a case compares (its --encryption list)."""
    flags = CASES[case]
    return len(flags[flags.index("--encryption") + 1].split(","))


def uptime() -> str:
    return Path("/proc/loadavg").read_text().split()[0:3].__str__()


def tdebench(args: list[str], log: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with open(log, "w") as fh:
        return subprocess.run([sys.executable, "-m", "tdebench", "run", *args], env=env, stdout=fh,
                              stderr=subprocess.STDOUT).returncode


# reading a run -----------------------------------------------------------------------------------------------
Unit = tuple[int, int]  # (block, round): the pairing unit (round 0 where the block pairs)


def series(run: Path, key: tuple[str, str, str]) -> dict[str, dict[Unit, float]]:
    """config -> {(block, round): value} of the ok measured rows of series ``key`` (test, step, metric)."""
    out: dict[str, dict[Unit, float]] = {}
    with open(run / "measurements.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            if (r["test"], r["step"], r["metric"], r["status"]) == (*key, "ok") and int(r["block"]) > 0:
                unit = (int(r["block"]), int(r.get("round") or 0))
                out.setdefault(r["config"], {})[unit] = float(r["value"])
    return out


def case_of(run: Path) -> str:
    return run.name.split("@")[0]


def baselines(run: Path) -> dict[str, str]:
    manifest = json.loads((run / "manifest.json").read_text())
    plain: dict[str, str] = {}
    out = {}
    for c in manifest["plan"]["configs"]:
        if c["encryption"] == "none" and c["engine"] not in plain:
            plain[c["engine"]] = c["label"]
        elif c["engine"] in plain:
            out[c["label"]] = plain[c["engine"]]
    return out


def block_minutes(run: Path) -> dict[int, float]:
    """Minutes from the start of the run to the end of each measured block (from the precision history)."""
    manifest = json.loads((run / "manifest.json").read_text())
    return {h["block"]: h["elapsed_s"] / 60 for h in manifest.get("precision", {}).get("history", [])}


def paired(run: Path, config: str, base: str, which: int) -> list[tuple[float, object]]:
    """(minutes, the stopping rule's decision) after each block, on the blocks both configs have, paired as tdebench
    pairs them (:func:`tdebench.stats.seqinterval.paired_blocks`: round-paired values per block); ``which``: 0 the
    case's headline, 1 its CPU co-metric."""
    head = HEADLINES[case_of(run)][which]
    with open(run / "measurements.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if (r["test"], r["step"], r["metric"]) == head]
    out = []
    for block, minutes in sorted(block_minutes(run).items()):
        m = parse_rows(r for r in rows if int(r["block"]) <= block)
        # a memory-ratio run labels its rows with the regime (mariadb-none@mem0.25): pair within the same one
        key = next((k for k in m.series if split_label(k.config)[0] == config), None)
        if key is None:
            continue
        plain, values = paired_blocks(m, key, regime_label(base, ratio_of(key.config)))
        if plain.size >= 2 and (plain > 0).all() and (values > 0).all():
            out.append((minutes, RULE.check_paired(plain, values)))
    return out


def curve(run: Path, config: str, base: str, which: int) -> list[tuple[float, int, float]]:
    """(minutes, n, half-width) after each block (see :func:`paired`)."""
    return [(minutes, d.n, d.half_width_pp) for minutes, d in paired(run, config, base, which)]


def final(run: Path, config: str, base: str) -> tuple[float, float, float, int] | None:
    """The headline's estimate, interval (percent) and n at the run's end."""
    points = paired(run, config, base, 0)
    if not points or points[-1][1].ci_low_pct is None:
        return None
    d = points[-1][1]
    return d.estimate_pct, d.ci_low_pct, d.ci_high_pct, d.n


def agreement(variants: dict[str, Path], config: str, base: str) -> list[str]:
    """Each variant's final estimate, and whether every two variants' intervals overlap."""
    ends = {v: final(run, config, base) for v, run in variants.items()}
    lines = [f"  {v}: {e[0]:+.2f}% (95% CI {e[1]:+.2f}% to {e[2]:+.2f}%), n = {e[3]}" if e else f"  {v}: no interval"
             for v, e in ends.items()]
    done = [(v, e) for v, e in ends.items() if e]
    for i, (v, e) in enumerate(done):
        for w, f in done[i + 1:]:
            overlap = e[1] <= f[2] and f[1] <= e[2]
            lines.append(f"  {v} and {w}: intervals {'overlap' if overlap else 'DO NOT overlap'}")
    return lines


def at_minute(points: list[tuple[float, int, float]], minute: float) -> str:
    done = [p for p in points if p[0] <= minute]
    if not done:
        return "—"
    _, n, hw = done[-1]
    return f"±{hw:.2f} n={n}" if math.isfinite(hw) else f"— n={n}"


def noise(run: Path) -> list[str]:
    """CV per arm, per-block log-ratio sd and lag-1 r, steal, other tenants, load."""
    lines = []
    for metric in HEADLINES[case_of(run)]:
        values = series(run, metric)
        cvs = ", ".join(f"{c} {100 * statistics.stdev(v.values()) / statistics.mean(v.values()):.1f}%"
                        for c, v in values.items() if len(v) > 1)
        lines.append(f"  {metric}: CV per arm {cvs}")
        for config, base in baselines(run).items():
            common = sorted(set(values.get(config, {})) & set(values.get(base, {})))
            if len(common) > 2:
                d = np.log([values[config][b] / values[base][b] for b in common])
                lines.append(f"    log ratio {config}/{base} per pair: mean {100 * d.mean():+.2f}%, "
                             f"sd {100 * d.std(ddof=1):.2f}%, lag-1 r {lag1(d):+.2f}, n {len(d)}")
    manifest = json.loads((run / "manifest.json").read_text())
    cond = [c for c in manifest.get("conditions", []) if c.get("block", 0) > 0]
    if cond:
        med = {k: statistics.median(c[k] for c in cond if c.get(k) is not None)
               for k in ("steal_pct", "foreign_cores", "load1")}
        lines.append(f"  machine: steal {med['steal_pct']:.2f}%, other tenants {med['foreign_cores']:.2f} cores, "
                     f"load1 {med['load1']:.2f} (medians over trials); frequency changed in "
                     f"{sum(bool(c.get('mhz_changed')) for c in cond)} of {len(cond)} trials")
    skew = manifest.get("schedule", {}).get("skew_us")
    if skew:
        io = [f"{label}: {f.get('io_scheduler')}, weight {'honoured' if f.get('io_weight_honoured') else 'ignored'}"
              for label, f in manifest["schedule"].get("cgroups", {}).get("io", {}).items()]
        lines.append(f"  duet: barrier skew median {skew['median']} µs, p95 {skew['p95']} µs, max {skew['max']} µs over "
                     f"{skew['pairs']} pairs; CPU sets {manifest['schedule'].get('cpu_slots')}; I/O {'; '.join(io)}")
    entry = manifest.get("precision", {})
    lines.append(f"  stopped by {entry.get('stopped_by')} after {manifest.get('blocks_run')} blocks; "
                 f"setup (data, load, checks, warm-up) until block 1: "
                 f"{min(block_minutes(run).values(), default=float('nan')) :.1f} min incl. block 1")
    return lines


def show(runs: dict[str, Path], minutes: float) -> None:
    """Side by side: per case and comparison, half-width vs minutes for every variant."""
    by_case: dict[str, dict[str, Path]] = {}
    for name, run in runs.items():
        case, variant = name.split("@")
        by_case.setdefault(case, {})[variant] = run
    for case, variants in by_case.items():
        first = next(iter(variants.values()))
        for config, base in baselines(first).items():
            head, cpu = HEADLINES[case]
            print(f"\n{case}: {config} vs {base} — 95% CI half-width of the overhead, percentage points: "
                  f"{'/'.join(head)} [{'/'.join(cpu)}]")
            print(f"{'minute':>6} | " + " | ".join(f"{v:^30}" for v in variants))
            curves = {v: (curve(r, config, base, 0), curve(r, config, base, 1)) for v, r in variants.items()}
            for minute in range(1, int(minutes) + 1):
                cells = [f"{at_minute(e, minute)} [{at_minute(c, minute).split(' n=')[0]}]" for e, c in curves.values()]
                print(f"{minute:>6} | " + " | ".join(f"{c:^30}" for c in cells))
            print(f"{case}: {config} vs {base} at the end of each run ({'/'.join(head)}):")
            print("\n".join(agreement(variants, config, base)))
        for variant, run in variants.items():
            print(f"{case} {variant}: {run}")
            print("\n".join(noise(run)))


def run_curves(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for case in args.cases.split(","):
        for variant in args.variants.split(","):
            run = out / f"{case}@{variant}"
            if variant in ("duet", "turns") and configs_of(case) != 2:
                print(f"skipped {case} {variant}: --schedule {variant} runs two configs ({case}-aa or {case}-tde do)",
                      flush=True)
                continue
            if not (run / "manifest.json").exists():
                flags = [*CASES[case], *VARIANTS[variant], "--precision", "1%", "--max-time", f"{args.minutes}m",
                         "--seed", str(args.seed), "--out", str(run)]
                flags += ["--data-dir", args.data_dir] if args.data_dir else []
                t0, load0 = time.monotonic(), uptime()
                code = tdebench(flags, out / f"{case}@{variant}.log")
                print(f"ran {case} {variant}: exit {code}, {(time.monotonic() - t0) / 60:.1f} min, "
                      f"load {load0} -> {uptime()}", flush=True)
            runs[f"{case}@{variant}"] = run
    show(runs, args.minutes)


def run_fp(args: argparse.Namespace) -> None:
    """Independent A/A runs: how many final headline intervals exclude 0."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    heads = (FP_HEADLINES.get(args.case, HEADLINES[args.case][:1]) if args.case
             else (("power", "total", "elapsed"),))
    rows: dict[tuple[str, str, str], list[object]] = {head: [] for head in heads}
    for rep in range(1, args.reps + 1):
        run = out / f"aa-{rep:02d}"
        if not (run / "report" / "overhead.csv").exists():
            what = ([*CASES[args.case]] if args.case else
                    ["--engine", args.engine, "--sf", str(args.sf), "--encryption", "none,none"])
            flags = [*what, "--schedule", args.schedule, "--seed", str(1000 + rep), "--out", str(run)]
            flags += (["--precision", args.precision, "--trials", str(args.trials), "--max-trials",
                       str(args.max_trials)] if args.precision else ["--trials", str(args.trials)])
            flags += ["--data-dir", args.data_dir] if args.data_dir else []
            flags += {"on": ["--restart-twins"], "off": ["--no-restart-twins"]}.get(args.restart, [])
            flags += shlex.split(args.run_args)
            load0 = uptime()
            code = tdebench(flags, out / f"aa-{rep:02d}.log")
            print(f"rep {rep}: exit {code}, load {load0} -> {uptime()}", flush=True)
        with open(run / "report" / "overhead.csv", newline="") as fh:
            found = {(r["test"], r["step"], r["metric"]): r for r in csv.DictReader(fh)}
        for head in (h for h in heads if h in found):  # a run recorded before a figure existed lacks it
            row = found[head]
            rows[head].append(type("Row", (), {k: (float(row[k]) if row[k] else None)
                                               for k in ("overhead_pct", "ci_low_pct", "ci_high_pct")}))
            print(f"  aa-{rep:02d} {'/'.join(head)}: {row['overhead_pct'][:6]}% ({row['ci_low_pct'][:6]} to "
                  f"{row['ci_high_pct'][:6]}), n {row['n']}, {row['ci_method']}", flush=True)
    for head in (h for h in heads if rows[h]):
        print(f"{'/'.join(head)}: {false_positive_rate(rows[head]).text()}")
    block_effect([out / f"aa-{rep:02d}" for rep in range(1, args.reps + 1)], heads[0])
    for head in heads:
        run_effect([out / f"aa-{rep:02d}" for rep in range(1, args.reps + 1)], head)


def plan_order(run: Path, labels: object) -> list[str]:
    """The configs among ``labels`` in the run's plan order (the plan's first is the base)."""
    order = [c["label"] for c in json.loads((run / "manifest.json").read_text()).get("configs", [])]
    return sorted(labels, key=lambda c: order.index(c) if c in order else len(order))  # type: ignore[arg-type]


def round_ratios(run: Path, head: tuple[str, str, str]) -> dict[int, list[float]]:
    """Per measured block of an A/A run, the log ratios (second config / first) of its rounds, in order."""
    test, step, metric = head
    by = round_logs(run / "measurements.csv", test, metric).get(step, {})
    configs = plan_order(run, by)
    return round_log_ratios(by, configs[1], configs[0]) if len(configs) == 2 else {}


def run_effect(runs: list[Path], head: tuple[str, str, str]) -> None:
    """Is there noise shared by the blocks of one run (its load, where its files lie on the disk), beyond what each
    block draws? One-way ANOVA of the per-block log ratios (second config / first) by run: a between-run sd that a
    run's own interval, over its blocks, cannot see."""
    test, step, metric = head
    per_run = []
    for run in runs:
        by = block_values(run / "measurements.csv", test, metric).get(step, {})
        configs = plan_order(run, by)
        if len(configs) == 2:
            per_run.append(np.array(list(block_log_ratios(by, configs[1], configs[0]).values())))
    e = anova_by_block(per_run)
    if e is None:
        return
    print(f"{'/'.join(head)}: run effect over {e['blocks']} runs of about {e['k']:.0f} blocks: within-run sd of a "
          f"block's log ratio {e['within_sd']:.2f}%, between-run sd {e['between_sd']:.2f}% (F = {e['f']:.2f}, "
          f"p = {e['p']:.3f}); run means {', '.join(f'{x.mean():+.2f}' for x in per_run)}%")


def block_effect(runs: list[Path], head: tuple[str, str, str]) -> None:
    """For a round-paired headline: is there noise shared by the rounds of one block (its server processes and
    clients), beyond the round-to-round noise? One-way ANOVA of the per-round log ratios by block, over every
    measured block of every run (a between-block sd the per-round interval does not see); the mean ratio of the
    first, second, ... measured block over the runs (a first block that differs is one the warm-up should have
    absorbed); and the false-positive count with each run's first measured block left out."""
    from tdebench.stats.interval import overhead_interval, rounds_interval

    per_run = [round_ratios(run, head) for run in runs]
    e = anova_by_block([100 * np.array(x) for blocks in per_run for x in blocks.values()])
    if e is None:
        return
    print(f"block effect over {e['blocks']} blocks of about {e['k']:.0f} rounds: within-block sd of a round's log "
          f"ratio {e['within_sd']:.1f}%, between-block sd {e['between_sd']:.2f}% (F = {e['f']:.2f}, p = {e['p']:.3f}); "
          f"design effect of a block mean 1 + k·σ_b²/σ_w² = {e['design_effect']:.2f}")
    for position in range(max(len(b) for b in per_run)):
        means = [float(np.mean(list(b.values())[position])) for b in per_run if len(b) > position]
        print(f"  measured block {position + 1}: mean log ratio over {len(means)} runs {100 * np.mean(means):+.2f}% "
              f"(sd {100 * np.std(means, ddof=1) if len(means) > 1 else 0:.2f})")
    rows = []
    for blocks in per_run:
        rest = [v for b in sorted(blocks)[1:] for v in blocks[b]]
        interval = rounds_interval(np.ones(len(rest)), np.exp(rest)) if len(rest) > 2 else None
        lo, hi = (interval.ci if interval else (None, None))
        rows.append(type("Row", (), {"overhead_pct": None, "ci_low_pct": None if lo is None else 100 * lo,
                                     "ci_high_pct": None if hi is None else 100 * hi}))
    print("per round, with the first measured block of every run left out (taken as its warm-up): "
          + false_positive_rate(rows).text())
    rows = []
    for blocks in per_run:  # what tdebench reports: one pair per block (stats/load.per_block)
        means = np.array([float(np.mean(v)) for _, v in sorted(blocks.items())])
        interval = overhead_interval(np.ones(means.size), np.exp(means), paired=True) if means.size > 1 else None
        lo, hi = interval.ci if interval and interval.ci else (None, None)
        rows.append(type("Row", (), {"overhead_pct": None, "ci_low_pct": None if lo is None else 100 * lo,
                                     "ci_high_pct": None if hi is None else 100 * hi}))
    print("per block (how tdebench counts round-paired values): " + false_positive_rate(rows).text())


def probe_check(args: argparse.Namespace) -> None:
    """schedstat (ns per thread) vs stat (ticks per process) around every query of a real server."""
    import tempfile

    from tdebench.api.engine import Config
    from tdebench.encryption import parse_spec
    from tdebench.engines import get_engine
    from tdebench.measure.proctime import TreeCpu
    from tdebench.workloads.tpch import params
    from tdebench.workloads.tpch.datagen import ensure_data
    from tdebench.workloads.tpch.loader import load_tpch

    engine = get_engine(args.engine)
    work = Path(tempfile.mkdtemp(prefix="probe-check-", dir="/var/tmp"))
    inst = engine.create_instance(Config(args.engine, parse_spec("none"), engine.default_settings()), work, "tpch")
    data, _ = ensure_data(args.sf, Path(args.data_dir) if args.data_dir else None)
    diffs, totals = [], []
    with inst:
        load_tpch(inst, inst.dialect, data)
        tree = TreeCpu(inst.server_pids)
        conn = inst.connect()
        for _ in range(args.rounds):
            for n in range(1, 23):
                sql = params.render_query(n, inst.dialect.family, args.sf)
                before = tree.read()
                cur = conn.cursor()
                for statement in [s for s in sql.split(";") if s.strip()]:
                    cur.execute(statement)
                    cur.fetchall()
                conn.commit()
                after = tree.read()
                exact, ticks = tree.seconds_between(before, after), TreeCpu.tick_seconds_between(before, after)
                diffs.append(ticks - exact)
                totals.append(exact)
        conn.close()
    d = np.array(diffs)
    print(f"{args.engine} SF {args.sf}: {len(d)} statements, server CPU per statement {np.mean(totals) * 1000:.1f} ms "
          f"mean; stat ticks − schedstat ns: mean {d.mean() * 1000:+.2f} ms, sd {d.std(ddof=1) * 1000:.2f} ms, "
          f"max |·| {np.abs(d).max() * 1000:.1f} ms; windows that fell back to ticks: {tree.fallbacks} of "
          f"{tree.windows}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", nargs="?", default="curves", choices=("curves", "fp", "probe-check", "show"))
    parser.add_argument("dirs", nargs="*")
    parser.add_argument("--minutes", type=float, default=15)
    parser.add_argument("--cases", default="mariadb,sqlite")
    parser.add_argument("--variants", default="block,query")
    parser.add_argument("--out", default="precision-bench")
    parser.add_argument("--data-dir")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--engine", default="sqlite")
    parser.add_argument("--case", choices=sorted(CASES), help="fp: an A/A case of CASES (its none,none variant) "
                        "instead of --engine/--sf")
    parser.add_argument("--sf", type=float, default=0.01)
    parser.add_argument("--schedule", default="query")
    parser.add_argument("--precision", default="5%")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--max-trials", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--restart", choices=("default", "on", "off"), default="default",
                        help="fp: --restart-twins (on), --no-restart-twins (off) or the run's default")
    parser.add_argument("--run-args", default="", help="fp: more tdebench run flags for every repetition, e.g. "
                        "\"--duration 20s --warmup 0\"")
    args = parser.parse_args()
    print(f"{' '.join(sys.argv)}\nload average at start: {uptime()}", flush=True)
    if args.mode == "curves":
        run_curves(args)
    elif args.mode == "fp":
        run_fp(args)
    elif args.mode == "probe-check":
        probe_check(args)
    else:
        show({Path(d).name: Path(d) for d in args.dirs}, args.minutes)
    print(f"load average at end: {uptime()}")


if __name__ == "__main__":
    main()
