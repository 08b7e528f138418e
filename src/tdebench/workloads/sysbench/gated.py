"""A sysbench process that stays connected and runs only while tdebench opens its gate (the interleaved schedule).

One ``sysbench gated.lua run`` per config, step and block: its threads connect once, prepare their statements, and
then wait at a gate (an 8-byte file both sides map into memory). :meth:`GatedSysbench.open_slice` writes a slice
number into it, :meth:`GatedSysbench.close_slice` writes 0 and collects what every thread counted in that slice:
transactions that started and ended while it was open, their latencies, and the errors sysbench ignored and
retried. Starting a sysbench process per slice instead cost a second per slice and made its throughput noisier
(docs/lab/oltp-interleaved.md, "sysbench with connected clients").
"""

from __future__ import annotations

import mmap
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.encryption import redact
from tdebench.engines.toolkit.process import own_processes
from tdebench.errors import EnvironmentProblem
from tdebench.lifeline import helper_preexec
from tdebench.workloads.sysbench.accounts import Account
from tdebench.workloads.sysbench.options import SysbenchOptions
from tdebench.workloads.sysbench.output import Report, histogram_percentile
from tdebench.workloads.sysbench.runner import common_options, find_sysbench

SCRIPT = Path(__file__).with_name("gated.lua")
#: statements per transaction of each bundled test at sysbench's defaults (reads, writes, other): 10 point
#: selects and 4 range selects; an index update, a non-index update, a delete and an insert; BEGIN and COMMIT.
#: They are what sysbench's own report counts per transaction (20 queries of oltp_read_write)
MIX = {"oltp_read_write": (14, 4, 2), "oltp_read_only": (14, 0, 2), "oltp_write_only": (0, 4, 2),
       "oltp_insert": (0, 1, 0)}
#: how long a closed slice may wait for a thread's last transaction (InnoDB's lock wait timeout is 50 s)
SETTLE_TIMEOUT = 90.0
START_TIMEOUT = 120.0


@dataclass
class Slice:
    """What the threads counted while one slice was open."""

    seconds: float
    latencies_us: list[int] = field(default_factory=list)
    errors: int = 0
    reconnects: int = 0

    def report(self, test: str) -> Report:
        """The slice as a :class:`Report` (rates over the slice; queries from the test's statement mix)."""
        n = len(self.latencies_us)
        reads, writes, other = MIX[test]
        out = Report(transactions=n, tps=n / self.seconds, queries=n * (reads + writes + other),
                     qps=n * (reads + writes + other) / self.seconds, reads=n * reads, writes=n * writes,
                     other=n * other, errors=self.errors, reconnects=self.reconnects)
        if n:  # the nearest rank, as for sysbench's own histogram
            rows = sorted(Counter(self.latencies_us).items())
            out.latency = {"min": rows[0][0] / 1e6, "avg": sum(self.latencies_us) / n / 1e6,
                           "max": rows[-1][0] / 1e6,
                           **{f"p{p}": histogram_percentile(rows, p) / 1e6  # type: ignore[operator]
                              for p in (50, 95, 99)}}
        return out


class GatedSysbench:
    """One connected sysbench process of ``threads`` threads running ``test``; a context manager that stops it."""

    def __init__(self, account: Account, opts: SysbenchOptions, test: str, threads: int, seed: int,
                 workdir: Path | None = None) -> None:
        self.account, self.opts, self.test, self.threads, self.seed = account, opts, test, threads, seed
        # in the run's work directory, which `tdebench cleanup` removes if the run is killed
        self.dir = Path(tempfile.mkdtemp(prefix="sysbench-gate-", dir=workdir))
        self.dir.chmod(0o700)
        self.proc: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self._gate: mmap.mmap | None = None
        self._ready = threading.Event()
        self._offsets: dict[Path, int] = {}
        self._number = 0

    def __enter__(self) -> "GatedSysbench":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the process and wait until its threads are connected and waiting at the closed gate."""
        gate = self.dir / "gate"
        gate.write_bytes(bytes(8))
        with open(gate, "r+b") as handle:
            self._gate = mmap.mmap(handle.fileno(), 8)
        argv = [str(find_sysbench()), str(SCRIPT), *common_options(self.opts), f"--threads={self.threads}",
                "--time=0", "--events=0", f"--rand-seed={self.seed}", "--report-interval=0"]
        env = {**os.environ, "TDEBENCH_TEST": self.test, "TDEBENCH_GATE": str(gate), "TDEBENCH_OUT": str(self.dir)}
        fd = self.account.config_pipe()
        try:
            self.proc = subprocess.Popen([*argv[:2], f"--config-file=/dev/fd/{fd}", *argv[2:], "run"],
                                         pass_fds=(fd,), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True,
                                         preexec_fn=helper_preexec())
        finally:
            os.close(fd)
        own_processes([self.proc.pid])
        threading.Thread(target=self._read_output, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise EnvironmentProblem(f"sysbench did not start its {self.test} threads: {self._tail()}",
                                         "check that sysbench runs its bundled OLTP tests (sysbench --version)",
                                         ["sysbench's bundled Lua tests"])

    def _read_output(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            if "Threads started!" in line:
                self._ready.set()

    def _tail(self) -> str:
        return redact(" | ".join(line.strip() for line in self.output[-6:] if line.strip()))[-600:]

    def _set(self, value: int) -> None:
        assert self._gate is not None
        self._gate[:8] = struct.pack("<q", value)

    def open_slice(self) -> float:
        """Let the threads run a new slice; returns when (``time.perf_counter``)."""
        self._number += 1
        self._set(self._number)
        return time.perf_counter()

    def close_slice(self, opened: float) -> Slice:
        """Stop the threads and collect the slice opened at ``opened`` from every thread."""
        self._set(0)
        result = Slice(seconds=time.perf_counter() - opened)
        waiting = {self.dir / f"thread{t}.txt" for t in range(self.threads)}
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while waiting:
            for path in list(waiting):
                line = self._line_for(path, self._number)
                if line is not None:
                    result.errors += int(line[1])
                    result.reconnects += int(line[2])
                    result.latencies_us.extend(int(v) for v in line[3:])
                    waiting.discard(path)
            if waiting:
                if self.proc is None or self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sysbench {self.test}: {len(waiting)} thread(s) did not finish slice "
                                       f"{self._number}: {self._tail() or 'no output'}")
                time.sleep(0.002)
        return result

    def _line_for(self, path: Path, number: int) -> list[str] | None:
        """The thread's line for slice ``number`` once written whole (older lines are skipped)."""
        try:
            with open(path) as handle:
                handle.seek(self._offsets.get(path, 0))
                text = handle.read()
        except FileNotFoundError:
            return None
        end = text.rfind("\n")
        if end < 0:
            return None
        self._offsets[path] = self._offsets.get(path, 0) + len(text[:end + 1].encode())
        found = [fields for fields in (line.split() for line in text[:end].splitlines()) if fields]
        return next((f for f in found if int(f[0]) == number), None)

    def stop(self) -> None:
        """End the process (its threads wait at a closed gate) and remove the gate and the threads' files."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        if self._gate is not None:
            self._gate.close()
            self._gate = None
        shutil.rmtree(self.dir, ignore_errors=True)
