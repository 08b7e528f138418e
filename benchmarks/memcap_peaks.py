#!/usr/bin/env python3
"""What the memory cgroups of a run's bounded twins held at their peaks (docs/fscrypt.md).

    python benchmarks/memcap_peaks.py [--load] -- <tdebench run arguments>
    e.g. python benchmarks/memcap_peaks.py --load -- --engine mariadb --sf 0.01 --memory-ratio 0.25 \\
             --encryption none,fs:gocryptfs --tests power --trials 6 --warmup 0

Runs ``tdebench run`` with the given arguments (into a temporary results directory unless they name ``--out``)
and samples every ``tdebench-*`` memory cgroup ten times a second: the limit, the peak usage, the peak anonymous
memory (``rss`` in v1, ``anon`` in v2) and page cache charged to the group, the OOM kills, and each member
process's peak resident anonymous memory (some of it charged outside the group: it was touched before the process
joined). ``--load`` runs a CPU spinner and two direct-I/O disk writers beside it, as a busy shared machine would.
Needs root (the cgroups are made for bounded twins only).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOTS = [Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")]
V1 = {"anon": "rss", "cache": "cache", "limit": "memory.limit_in_bytes", "usage": "memory.usage_in_bytes",
      "events": "memory.oom_control"}
V2 = {"anon": "anon", "cache": "file", "limit": "memory.max", "usage": "memory.current", "events": "memory.events"}
MIB = 1 << 20


def groups() -> list[Path]:
    found: list[Path] = []
    for root in ROOTS:
        if root.is_dir():
            found += [p for p in root.rglob("tdebench-*") if p.is_dir() and (p / "cgroup.procs").exists()]
    return found


def _fields(path: Path) -> dict[str, str]:
    return dict(line.split(None, 1) for line in path.read_text().splitlines() if " " in line)


def sample(group: Path, peaks: dict[str, dict[str, float]]) -> None:
    names = V1 if (group / "memory.limit_in_bytes").exists() else V2
    try:
        stat = _fields(group / "memory.stat")
        limit = (group / names["limit"]).read_text().strip()
        usage = int((group / names["usage"]).read_text())
        kills = int(_fields(group / names["events"]).get("oom_kill", "0"))
        pids = (group / "cgroup.procs").read_text().split()
    except (OSError, ValueError):
        return
    peak = peaks.setdefault(group.name.split("-", 2)[-1], {})
    peak["limit MiB"] = int(limit) / MIB if limit.isdigit() else float("inf")
    for key, value in (("usage MiB", usage), ("anon MiB", int(stat.get(names["anon"], 0))),
                       ("page cache MiB", int(stat.get(names["cache"], 0)))):
        peak[key] = max(peak.get(key, 0.0), value / MIB)
    peak["oom kills"] = kills
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, KeyError):
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            status = _fields(Path(f"/proc/{pid}/status"))
            anon = int(status["RssAnon:"].split()[0]) * 1024 if "RssAnon:" in status else 0
            peak[f"{comm} anon MiB"] = max(peak.get(f"{comm} anon MiB", 0.0), anon / MIB)


@contextlib.contextmanager
def background_load(on: bool) -> Iterator[None]:
    """A CPU spinner and two writers of 400 MiB files with O_DIRECT, looping, in their own directory."""
    if not on:
        yield
        return
    work = Path(tempfile.mkdtemp(prefix="memcap-load-", dir="/var/tmp"))
    procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])]
    for i in range(2):
        procs.append(subprocess.Popen(["sh", "-c", f"while :; do dd if=/dev/zero of={work}/f{i} bs=1M count=400 "
                                       f"oflag=direct 2>/dev/null; rm -f {work}/f{i}; done"]))
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        for path in work.iterdir():
            path.unlink()
        work.rmdir()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", action="store_true", help="run a CPU and disk load beside it")
    parser.add_argument("run", nargs=argparse.REMAINDER, help="-- then the arguments of tdebench run")
    args = parser.parse_args()
    run_args = [a for a in args.run if a != "--"]
    if os.geteuid() != 0:
        print("memcap_peaks: needs root (memory cgroups); run it with sudo", file=sys.stderr)
        return 3
    peaks: dict[str, dict[str, float]] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for group in groups():
                sample(group, peaks)
            time.sleep(0.1)

    with tempfile.TemporaryDirectory(prefix="memcap-peaks-") as tmp, background_load(args.load):
        out = [] if "--out" in run_args else ["--out", str(Path(tmp) / "run")]
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "tdebench", "run", *run_args, *out], check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        stop.set()
        watcher.join()
    print(f"tdebench run exited {proc.returncode} after {time.monotonic() - started:.0f} s"
          f"{' beside a CPU and disk load' if args.load else ''}")
    if proc.returncode:
        print("\n".join(proc.stderr.splitlines()[-5:]))
    for name, peak in sorted(peaks.items()):
        print(f"{name}: " + ", ".join(f"{k} {v:.0f}" for k, v in peak.items()))
    return 0 if peaks else 1


if __name__ == "__main__":
    raise SystemExit(main())
