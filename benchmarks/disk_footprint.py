#!/usr/bin/env python3
"""Disk footprint of each engine and encryption mechanism while TPC-H is loaded: the disk guard's evidence.

    python benchmarks/disk_footprint.py [--sf 0.01,0.1] [--case postgres=column:aes-256 ...] [--data-dir DIR]
        [--server-setting KEY=VALUE] [--trials N] [--save FILE.jsonl]
    python benchmarks/disk_footprint.py --load FILE.jsonl [--load ...] [--markdown]

For every case installed here (default: sqlite none + sqlcipher:aes-256-cbc, mariadb none + tde:aes-256-ctr +
fs:gocryptfs, postgres none + column:aes-256 + column:pgp-aes256 + fs:gocryptfs) and every scale factor, runs
``python -m tdebench verify --engine E --encryption SPEC --sf SF`` (with ``--trials N``: ``tdebench run`` with N
power-test trials) with ``TMPDIR`` set to a fresh directory W: ``verify`` has no ``--work-dir``, its instances
go to the temp directory as a run's do by default. A thread adds up every ~0.2 s the bytes under W:

* each file counts max(size, allocated blocks): a sparse file (MariaDB's redo log) is counted at the size
  it will fill, preallocated blocks are counted too;
* directory symlinks are followed (instances relocated to /var/tmp), FUSE mounts are not (gocryptfs' plain
  view of the cipher directory would count the data twice);
* files deleted while still open by the verify process tree (SQLite's and MariaDB's sort files) count
  while they are open;
* "log" is the part in PostgreSQL's pg_wal and MariaDB's ib_logfile* (gocryptfs encrypts the names: 0 there).

``peak`` is the largest sample; ``final`` the sample taken when the load is done (tdebench says "verifying
encryption at rest"). ``input`` is the TPC-H input files' size, the disk guard's ``raw``. Each line shows the
guard's estimate for that one config and whether it covers the peak; with --reset snapshot the need is the
larger of the peak and twice the final bytes (the loaded database and its copy). With two or more scale
factors an upper line ``MiB = a × input + b`` is printed per case, the disk guard's factors before margins.
``--save`` keeps the measurements, ``--load`` prints saved ones against the current guard (after changing
its factors) and ``--markdown`` the table of docs/reliability.md. Exit status 1 if any estimate is below
what was measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.cli.run import experiment_from_options, plan_from_experiment  # noqa: E402
from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import get_engine  # noqa: E402
from tdebench.errors import TdebenchError  # noqa: E402
from tdebench.runner import diskguard  # noqa: E402

CASES = (("sqlite", "none"), ("sqlite", "sqlcipher:aes-256-cbc"), ("mariadb", "none"),
         ("mariadb", "tde:aes-256-ctr"), ("mariadb", "fs:gocryptfs"), ("postgres", "none"), ("postgres", "column:aes-256"),
         ("postgres", "column:pgp-aes256"), ("postgres", "fs:gocryptfs"))
NOT_FOLLOWED = ("/dev/shm", "/proc", "/sys", "/run")  # tmpfs and kernel views: not the work disk
LOADED = "verifying encryption at rest"
MIB = 1024 * 1024


@dataclass
class Usage:
    """One sample: all bytes, and the WAL / redo-log part of them."""

    total: int = 0
    log: int = 0


@dataclass
class Result:
    """One measured load; the guard's estimates are worked out when printed (see :func:`guard`)."""

    engine: str
    spec: str
    sf: float
    settings: list[str]
    input: int
    peak: Usage
    final: Usage
    seconds: float
    trials: int = 0  # power-test trials after the load (0: `tdebench verify`)

    @property
    def snapshot_need(self) -> int:
        """With --reset snapshot: the load's peak, or the loaded database plus its copy."""
        return max(self.peak.total, 2 * self.final.total)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Result:
        d = json.loads(text)
        return cls(**{**d, "peak": Usage(**d["peak"]), "final": Usage(**d["final"])})


# measuring -----------------------------------------------------------------------------------------------
def file_bytes(st: os.stat_result) -> int:
    return max(st.st_size, st.st_blocks * 512)


def is_log(path: str) -> bool:
    return "/pg_wal/" in path or os.path.basename(path).startswith("ib_logfile")


def walk(root: str, usage: Usage, seen: set[tuple[int, int]], roots: list[str]) -> None:
    """Add the files under ``root`` (same filesystem only) to ``usage``; relocated directories join ``roots``."""
    try:
        device = os.stat(root).st_dev
    except OSError:
        return
    stack = [root]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue  # removed while we looked
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if entry.is_symlink():
                    follow(entry.path, roots)
                elif entry.is_dir(follow_symlinks=False):
                    if st.st_dev == device:  # a FUSE mount point is not descended into
                        stack.append(entry.path)
                elif (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    usage.total += file_bytes(st)
                    usage.log += file_bytes(st) if is_log(entry.path) else 0
            except OSError:
                continue


def follow(link: str, roots: list[str]) -> None:
    target = os.path.realpath(link)
    if os.path.isdir(target) and not target.startswith(NOT_FOLLOWED) and not under(target, roots):
        roots.append(target)


def under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (servers, gocryptfs)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def deleted_open_files(pids: list[int], roots: list[str], usage: Usage, seen: set[tuple[int, int]]) -> None:
    """Add files unlinked while open (sort spills) that lived under ``roots``."""
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if not target.endswith(" (deleted)") or not under(target[:-10], roots):
                    continue
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                usage.total += file_bytes(st)


def sample(pid: int, roots: list[str]) -> Usage:
    """Bytes under ``roots`` now, plus deleted files still held open by ``pid``'s process tree."""
    usage, seen = Usage(), set()
    index = 0
    while index < len(roots):  # walking may find relocated instance directories
        walk(roots[index], usage, seen, roots)
        index += 1
    deleted_open_files(descendants(pid), roots, usage, seen)
    return usage


class Poller(threading.Thread):
    """Samples the bytes under a work directory every ``interval`` seconds; keeps the peak."""

    def __init__(self, root: Path, pid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.roots = [str(root.resolve())]
        self.peak = Usage()
        self.lock = threading.Lock()
        self.done = threading.Event()

    def take(self) -> Usage:
        usage = sample(self.pid, self.roots)
        with self.lock:
            self.peak = Usage(max(self.peak.total, usage.total), max(self.peak.log, usage.log))
        return usage

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.take()


def measure(engine: str, spec: str, sf: float, args: argparse.Namespace) -> tuple[Usage, Usage, dict, float]:
    """(peak, final, the run's data facts, seconds) of one ``tdebench verify``."""
    with tempfile.TemporaryDirectory(prefix="disk-footprint-", dir=args.work_base) as tmp:
        # not "tdebench-*": tdebench's clean-up treats a tdebench-* directory above a helper's paths as its own
        work, out = Path(tmp) / "work", Path(tmp) / "out"
        work.mkdir(mode=0o755)
        os.chmod(tmp, 0o755)  # the service user must reach the instances, as under /tmp
        command = [sys.executable, "-m", "tdebench", "verify" if not args.trials else "run", "--engine", engine,
                   "--encryption", spec, "--sf", f"{sf:g}", "--out", str(out)]
        if args.trials:  # the power test's queries too: their sort and hash spills, RF1/RF2's WAL
            command += ["--trials", str(args.trials), "--warmup", "0", "--tests", "power", "--no-report"]
        command += ["--data-dir", str(args.data_dir)] if args.data_dir else []
        for setting in args.server_setting:
            command += ["--server-setting", setting]
        started = time.monotonic()
        proc = subprocess.Popen(command, env={**os.environ, "TMPDIR": str(work)}, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        poller = Poller(work, proc.pid, args.interval)
        poller.start()
        final, lines = None, []
        assert proc.stdout is not None
        for text in proc.stdout:
            lines.append(text)
            if final is None and LOADED in text:
                final = poller.take()
        proc.wait()
        poller.done.set()
        poller.join()
        if proc.returncode != 0 or final is None:
            raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{''.join(lines)}")
        data = json.loads((out / "manifest.json").read_text())["data"]
        return poller.peak, final, data, time.monotonic() - started


# the guard -----------------------------------------------------------------------------------------------
def guard(r: Result) -> tuple[int, int]:
    """The disk guard's estimate for this one config and input: (--reset none, --reset snapshot)."""
    pairs = dict(s.split("=", 1) for s in r.settings)
    run = {"sf": r.sf, "trials": 1, "warmup": 0}
    plan = plan_from_experiment(experiment_from_options(r.engine, r.spec, pairs, run))
    data = {"raw_bytes": r.input}
    plain = diskguard.estimate(plan, data)
    snap = diskguard.estimate(dataclasses.replace(plan, reset="snapshot"), data)
    assert plain is not None and snap is not None
    return plain.need, snap.need


def covered(r: Result) -> bool:
    est, snap = guard(r)
    return est >= r.peak.total and snap >= r.snapshot_need


def input_bytes(r: Result, data: dict) -> int:
    """The input size the guard uses (the TPC-H files' bytes from the run's manifest)."""
    raw = diskguard.raw_bytes(data)
    assert raw is not None
    return raw[0]


def installed(engine: str, spec: str) -> str | None:
    """None if the case can run here, else why not."""
    try:
        eng = get_engine(engine)
        eng.check_available()
        check = getattr(eng, "check_spec_available", None)
        if callable(check):
            check(parse_spec(spec))
    except TdebenchError as exc:
        return exc.one_line()
    return None


# output --------------------------------------------------------------------------------------------------
def mib(n: float) -> str:
    return f"{n / MIB:,.1f}"


HEADER = (f"{'engine':<9}{'spec':<22}{'SF':>5}{'input':>9}{'peak':>10}{'final':>10}{'log':>9}{'peak/in':>8}"
          f"{'final/in':>9}{'estimate':>10}{'≥peak':>6}{'snap est':>10}{'snap need':>10}{'≥need':>6}{'s':>6}"
          f"{'trials':>7}")


def yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def line(r: Result) -> str:
    est, snap = guard(r)
    return (f"{r.engine:<9}{r.spec:<22}{r.sf:>5g}{mib(r.input):>9}{mib(r.peak.total):>10}{mib(r.final.total):>10}"
            f"{mib(r.peak.log):>9}{r.peak.total / r.input:>8.2f}{r.final.total / r.input:>9.2f}"
            f"{mib(est):>10}{yes(est >= r.peak.total):>6}{mib(snap):>10}{mib(r.snapshot_need):>10}"
            f"{yes(snap >= r.snapshot_need):>6}{r.seconds:>6.0f}{r.trials:>7}")


MD_HEADER = ("| engine | spec | settings | trials | SF | input MiB | peak MiB | final MiB | log MiB | peak/input "
             "| final/input |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")


def case_of(r: Result) -> tuple[str, str, tuple[str, ...], int]:
    return r.engine, r.spec, tuple(r.settings), r.trials


def by_case(results: list[Result]) -> list[Result]:
    """Grouped by case in order of first appearance, each by scale factor."""
    order = {case: i for i, case in enumerate(dict.fromkeys(map(case_of, results)))}
    return sorted(results, key=lambda r: (order[case_of(r)], r.sf))


def markdown_row(r: Result) -> str:
    """The row of docs/reliability.md's table (tests/unit/test_diskguard.py reads it back)."""
    cells = [r.engine, f"`{r.spec}`", " ".join(r.settings) or "–", str(r.trials), f"{r.sf:g}", mib(r.input),
             mib(r.peak.total), mib(r.final.total), mib(r.peak.log), f"{r.peak.total / r.input:.2f}",
             f"{r.final.total / r.input:.2f}"]
    return "| " + " | ".join(cells) + " |"


def upper_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """``y = a x + b`` through the smallest-input point with the steepest slope to any other point: on or above
    every measurement (sort spills make the growth steeper at larger scale factors)."""
    x0, y0 = min(zip(xs, ys))
    a = max((y - y0) / (x - x0) for x, y in zip(xs, ys) if x > x0)
    return a, y0 - a * x0


def fit_lines(results: list[Result]) -> list[str]:
    """Per case, the upper line ``MiB = a × input + b`` of the peak's non-log part, the log's peak, and the
    final bytes without the log."""
    out = []
    for case in dict.fromkeys(map(case_of, results)):
        rs = [r for r in results if case_of(r) == case]
        if len({r.input for r in rs}) < 2:
            continue
        xs = [float(r.input) for r in rs]
        parts = []
        for name, ys in (("peak non-log", [r.peak.total - r.peak.log for r in rs]), ("log", [r.peak.log for r in rs]),
                         ("final non-log", [r.final.total - r.final.log for r in rs])):
            a, b = upper_line(xs, [float(y) for y in ys])
            parts.append(f"{name} {a:.2f}×in{b / MIB:+,.1f}")
        label = " ".join([*case[2], f"{case[3]} trials" if case[3] else ""]).strip()
        out.append(f"{case[0]:<9}{case[1]:<22}{label + ': ' if label else ''}" + "; ".join(parts))
    return out


def report(results: list[Result]) -> int:
    """Fit lines and the verdict; 1 if the guard's estimate is below anything measured."""
    fits = fit_lines(results)
    if fits:
        print("\nupper lines over the scale factors (MiB = a × input + b, through the smallest SF):")
        print("\n".join(fits))
    bad = [r for r in results if not covered(r)]
    if bad:
        print(f"\n{len(bad)} estimate(s) below the measured bytes: "
              + ", ".join(f"{r.engine} {r.spec} SF {r.sf:g}" for r in bad))
    return 1 if bad else 0


# running -------------------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", default="0.01,0.1", help="comma-separated scale factors")
    parser.add_argument("--case", action="append", default=[], metavar="ENGINE=SPEC",
                        help="measure only these (repeatable); default: every built-in case installed here")
    parser.add_argument("--server-setting", action="append", default=[], metavar="KEY=VALUE",
                        help="passed to every case's verify and to the guard's estimate (repeatable)")
    parser.add_argument("--data-dir", type=Path, help="TPC-H data cache (default: tdebench's)")
    parser.add_argument("--work-base", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the measured work directories are made")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("--trials", type=int, default=0,
                        help="0: `tdebench verify` (load only); N: `tdebench run` with N power-test trials")
    parser.add_argument("--save", type=Path, help="append each measurement to this JSON-lines file")
    parser.add_argument("--load", type=Path, action="append", default=[],
                        help="measure nothing: print saved measurements against the current guard (repeatable)")
    parser.add_argument("--markdown", action="store_true", help="with --load: also print docs/reliability.md's table")
    return parser.parse_args()


def measure_all(args: argparse.Namespace) -> list[Result]:
    cases = [tuple(c.split("=", 1)) for c in args.case] or list(CASES)
    sfs = [float(s) for s in args.sf.split(",") if s.strip()]
    results: list[Result] = []
    for engine, spec in cases:
        why = installed(engine, spec)
        if why:
            print(f"{engine:<9}{spec:<22}skipped: {why}", flush=True)
            continue
        for sf in sfs:
            peak, final, data, seconds = measure(engine, spec, sf, args)
            result = Result(engine, spec, sf, list(args.server_setting), 0, peak, final, seconds, args.trials)
            result.input = input_bytes(result, data)
            results.append(result)
            print(line(result), flush=True)
            if args.save:
                with open(args.save, "a") as handle:
                    handle.write(result.to_json() + "\n")
    return results


def main() -> int:
    args = parse_args()
    extra = [f"{args.trials} power trial(s)"] if args.trials else []
    extra += [f"settings: {' '.join(args.server_setting)}"] if args.server_setting else []
    print("; ".join(["MiB = 1024²", "log = PostgreSQL pg_wal + MariaDB ib_logfile*", "s = seconds", *extra]))
    print(HEADER, flush=True)
    if args.load:
        results = [Result.from_json(t) for p in args.load for t in p.read_text().splitlines() if t.strip()]
        for result in results:
            print(line(result))
        if args.markdown:
            print("\n" + MD_HEADER + "\n" + "\n".join(markdown_row(r) for r in by_case(results)))
    else:
        results = measure_all(args)
    return report(results)


if __name__ == "__main__":
    sys.exit(main())
