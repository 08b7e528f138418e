#!/usr/bin/env python3
"""The online switch of docs/workloads/encrypt.md: MariaDB with TPC-H SF 1 (about 1.5 GiB loaded) switched to encrypted online with 1, 2 and 4
encryption threads while TPC-C runs in the background, then re-keyed on the same instance, then switched back.

    python benchmarks/encrypt_online.py --out runs/encrypt-online            # the full run (SF 1, 3 trials)
    python benchmarks/encrypt_online.py --out runs/encrypt-check --sf 0.01 --threads 1 --trials 2 --steady 3s   # a check

Runs ``tdebench run --workload encrypt`` (docs/workloads/encrypt.md) on one ``tde:aes-256-ctr`` MariaDB instance:
TPC-C (``--warehouses``, ``--vus`` closed-loop virtual users) is loaded and TPC-H at ``--sf`` beside it, both
plaintext; each trial then runs, per thread count, a steady baseline, the switch on (timed until the server reports
every tablespace encrypted), a steady phase, the at-rest scan, the re-keying of every table to another key under the
background with its scan, and the way back. Afterwards it prints the switching table's figures from
``report/switching.csv`` (the numbers the terminal, summary.md and index.html show: time to done, TPM and p95
meanwhile against the steady phase just before, geometric mean over trials with a 95% t interval, the plaintext the
scan left) and renders ``report/index.html`` in headless Chromium to ``report/index.png`` (the timeline plot is in
it) to look at.

``--iops`` sets ``innodb_encryption_rotation_iops``, the page operations a second all encryption threads together may
do. MariaDB's default, 100, would take about 16 min per switch of SF 1's ~100 000 pages whatever the thread count;
the default here, 10000, is meant not to bind on this machine's disk, so that the thread count sets the pace (a cap
that binds makes 1, 2 and 4 threads equally fast: ``--iops 1000,10000`` sweeps it as a second axis, doubling the
time). ``--buffer-pool`` defaults to 3G, which holds the data (docs/workloads/encrypt.md shows what a pool smaller
than the data does to the switch). Expect about 6 min per thread count and trial at SF 1 (steady phases,
switches, the re-keying's table rebuilds, two at-rest scans of ~1.6 GiB): the defaults took 56 min on 2 vCPUs,
load included (docs/workloads/encrypt.md, "Measured: TPC-H SF 1").
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def run_argv(a: argparse.Namespace) -> list[str]:
    """The ``tdebench run`` command line of the experiment."""
    argv = [sys.executable, "-m", "tdebench", "run", "--engine", "mariadb", "--encryption", a.spec,
            "--workload", "encrypt", "--sf", f"{a.sf:g}", "--warehouses", str(a.warehouses),
            "--workload-option", f"threads={a.threads}", "--workload-option", f"vus={a.vus}",
            "--workload-option", f"steady={a.steady}", "--workload-option", f"rampup={a.rampup}",
            "--workload-option", f"iops={a.iops}", "--workload-option", f"rekey={a.rekey}",
            "--workload-option", f"way_back={'true' if a.way_back else 'false'}",
            "--server-setting", f"innodb_buffer_pool_size={a.buffer_pool}",
            "--trials", str(a.trials), "--warmup", "0", "--out", str(a.out)]
    for flag in ("data_dir", "work_dir"):
        if getattr(a, flag):
            argv += [f"--{flag.replace('_', '-')}", str(getattr(a, flag))]
    return argv


def figures(out: Path) -> list[str]:
    """One line per switch from report/switching.csv, formatted as the report formats them."""
    sys.path.insert(0, str(ROOT / "src"))
    from tdebench.report.encrypt_view import ratio_text
    from tdebench.report.fmt import fmt_value
    from tdebench.stats.paired import PairedRatio

    def ratio(row: dict[str, str], prefix: str) -> str:
        if not row[f"{prefix}_ratio"]:
            return ratio_text(None)
        low, high = row[f"{prefix}_ci95_low"], row[f"{prefix}_ci95_high"]
        return ratio_text(PairedRatio(int(row["trials"]), float(row[f"{prefix}_ratio"]),
                                      float(low) if low else None, float(high) if high else None))

    lines = []
    with open(out / "report" / "switching.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            left = row["plaintext_hits_in_scope"]
            lines.append(f"{row['cycle']:>4} {row['action']:<5} done in {fmt_value(float(row['time_to_done_s']), 's')}"
                         f" (median of {row['trials']}); TPM meanwhile {ratio(row, 'tpm_during')}, p95 meanwhile "
                         f"{ratio(row, 'p95_during')}, TPM after {ratio(row, 'tpm_after')} of "
                         f"{row['baseline_phase']} ({fmt_value(float(row['tpm_baseline'] or 'nan'), 'tpm')}); "
                         f"plaintext left in scope: {'not scanned' if left == '' else left}")
    return lines


def screenshot(out: Path) -> Path | None:
    """report/index.html rendered by headless Chromium into report/index.png (None without Chromium)."""
    binary = next((shutil.which(b) for b in CHROMIUM if shutil.which(b)), None)
    if binary is None:
        print("no Chromium found: open report/index.html yourself", file=sys.stderr)
        return None
    png = out / "report" / "index.png"
    with tempfile.TemporaryDirectory(prefix="tdebench-chromium-") as profile:
        proc = subprocess.run([binary, *HEADLESS, f"--user-data-dir={profile}", f"--screenshot={png}",
                               "--window-size=1400,7000", (out / "report" / "index.html").resolve().as_uri()],
                              capture_output=True, text=True, timeout=180, check=False)
    if proc.returncode != 0 or not png.is_file():
        print(f"Chromium failed: {proc.stderr.strip()[-500:]}", file=sys.stderr)
        return None
    return png


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="the run directory (must not exist or be empty)")
    p.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor loaded beside the background (1)")
    p.add_argument("--threads", default="1,2,4", help="encryption threads, one cycle each (1,2,4)")
    p.add_argument("--trials", type=int, default=3, help="trials (3: the 95%% interval needs 2 or more)")
    p.add_argument("--steady", default="30s", help="each steady phase (30s)")
    p.add_argument("--rampup", default="5s", help="the background's ramp-up per window (5s)")
    p.add_argument("--warehouses", type=int, default=2, help="TPC-C warehouses of the background (2)")
    p.add_argument("--vus", type=int, default=2, help="TPC-C virtual users, closed loop (2)")
    p.add_argument("--iops", default="10000",
                   help="innodb_encryption_rotation_iops (10000); several, e.g. 1000,10000, sweep it (a cycle each)")
    p.add_argument("--buffer-pool", default="3G", help="innodb_buffer_pool_size (3G)")
    p.add_argument("--spec", default="tde:aes-256-ctr", help="the target encryption (tde:aes-256-ctr)")
    p.add_argument("--rekey", default="yes", choices=("yes", "no"), help="re-key after each switch on (yes)")
    p.add_argument("--no-way-back", dest="way_back", action="store_false", help="do not switch off again")
    p.add_argument("--data-dir", type=Path, help="tdebench's --data-dir (generated data are cached there)")
    p.add_argument("--work-dir", type=Path, help="tdebench's --work-dir (the instance's files)")
    a = p.parse_args()
    argv = run_argv(a)
    print("$ tdebench " + " ".join(argv[3:]), flush=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    code = subprocess.run(argv, env=env, check=False).returncode
    if code != 0 or not (a.out / "report" / "switching.csv").is_file():
        print(f"tdebench run exited with {code}; no switching table", file=sys.stderr)
        return code or 1
    print("\n".join(["", "switching (report/switching.csv):", *figures(a.out)]))
    png = screenshot(a.out)
    if png:
        print(f"report rendered by headless Chromium: {png} (the timeline is under Charts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
