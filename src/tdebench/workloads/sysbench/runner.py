"""Run the ``sysbench`` binary against an instance: prepare (the load) and one timed run per step."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tdebench.encryption import redact
from tdebench.engines.toolkit.process import own_processes
from tdebench.errors import EnvironmentProblem
from tdebench.lifeline import helper_preexec
from tdebench.workloads.sysbench.accounts import Account
from tdebench.workloads.sysbench.options import SysbenchOptions
from tdebench.workloads.sysbench.output import Report, parse_interval, parse_report

PACKAGE = "sysbench"
_GRACE = 120.0


def find_sysbench() -> Path:
    """The sysbench executable; EnvironmentProblem naming the Debian package if it is missing."""
    found = shutil.which("sysbench")
    if not found:
        raise EnvironmentProblem("sysbench is not installed (needed by --workload sysbench)",
                                 f"install the Debian package '{PACKAGE}' (apt-get install {PACKAGE})",
                                 ["sysbench on PATH"])
    return Path(found)


def sysbench_version() -> str:
    out = subprocess.run([str(find_sysbench()), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or "sysbench (unknown version)"


@dataclass
class Outcome:
    """Exit code, full output and the parsed report of one sysbench invocation."""

    code: int
    output: str
    report: Report
    seconds: float

    def error(self) -> str:
        tail = "\n".join(self.output.strip().splitlines()[-8:])
        return f"sysbench exited with code {self.code}: {redact(tail)[-1200:]}"


def common_options(opts: SysbenchOptions) -> list[str]:
    return [f"--tables={opts.tables}", f"--table-size={opts.table_size}", f"--range-size={opts.range_size}",
            f"--rand-type={opts.rand_type}"]


def _run(argv: list[str], account: Account, timeout: float, on_line: Callable[[str], None] | None) -> Outcome:
    """Run sysbench with the account's options in a config file read from an inherited pipe."""
    fd = account.config_pipe()
    started = time.perf_counter()
    lines: list[str] = []
    try:
        proc = subprocess.Popen([*argv[:2], f"--config-file=/dev/fd/{fd}", *argv[2:]], pass_fds=(fd,),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, bufsize=1, start_new_session=True, preexec_fn=helper_preexec())
    finally:
        os.close(fd)
    killer = threading.Timer(timeout, proc.kill)
    try:  # an interrupt while the record is written or the timer starts still ends sysbench
        own_processes([proc.pid])
        killer.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if on_line:
                on_line(line)
        code = proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        killer.cancel()
    text = "".join(lines)
    return Outcome(code, text, parse_report(text), time.perf_counter() - started)


def prepare(account: Account, opts: SysbenchOptions, test: str, threads: int) -> Outcome:
    """``sysbench <test> prepare``: creates and fills sbtest1..N (the load)."""
    argv = [str(find_sysbench()), test, *common_options(opts), f"--threads={threads}", "prepare"]
    return _run(argv, account, timeout=24 * 3600, on_line=None)


def run(account: Account, opts: SysbenchOptions, test: str, threads: int, seed: int,
        on_measuring: Callable[[], None] | None = None) -> Outcome:
    """``sysbench <test> run`` for ramp-up + duration; ``on_measuring`` fires when the ramp-up ends."""
    total = int(opts.rampup + opts.duration)
    argv = [str(find_sysbench()), test, *common_options(opts), f"--threads={threads}", f"--time={total}",
            "--report-interval=1", "--histogram=on", "--percentile=99", f"--rand-seed={seed}"]
    if opts.rampup > 0:
        argv.append(f"--report-checkpoints={int(opts.rampup)}")
    argv.append("run")
    fired = opts.rampup == 0

    def on_line(line: str) -> None:
        nonlocal fired
        if not fired and ("Checkpoint report" in line or _past(line, opts.rampup)):
            fired = True
            if on_measuring:
                on_measuring()

    if fired and on_measuring:
        on_measuring()
    return _run(argv, account, timeout=total + _GRACE, on_line=on_line)


def _past(line: str, rampup: float) -> bool:
    interval = parse_interval(line)
    return interval is not None and interval.second >= rampup
