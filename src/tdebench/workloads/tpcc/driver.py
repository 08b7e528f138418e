"""Run one virtual-user step: fork the VUs, start them together, collect and combine their results."""

from __future__ import annotations

import csv
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.engines.toolkit.process import own_processes
from tdebench.workloads.tpcc.histogram import Histogram
from tdebench.workloads.tpcc.options import TpccOptions
from tdebench.workloads.tpcc.procs import resolve_mode
from tdebench.workloads.tpcc.session import RETRY_KINDS
from tdebench.workloads.tpcc.txns import KINDS, NEW_ORDER, Terminal
from tdebench.workloads.tpcc.vu import VuConfig, VuResult, vu_main

CONNECT_TIMEOUT = 120.0


@dataclass
class StepResult:
    """One VU step combined over its virtual users."""

    vus: int
    duration: float
    latency: dict[str, Histogram] = field(default_factory=lambda: {k: Histogram() for k in KINDS})
    rolled_back: int = 0
    retries: dict[str, int] = field(default_factory=lambda: {k: 0 for k in RETRY_KINDS})
    errors: int = 0
    gave_up: int = 0
    skipped_districts: int = 0
    per_second: list[list[int]] = field(default_factory=list)
    second_latency: list[Histogram] = field(default_factory=list)  # every commit's latency, by second
    failures: list[str] = field(default_factory=list)

    @property
    def committed(self) -> int:
        return sum(h.count for h in self.latency.values())

    @property
    def tpm(self) -> float:
        """Committed business transactions (all five kinds) per minute of the measured window."""
        return self.committed * 60.0 / self.duration

    @property
    def nopm(self) -> float:
        """Committed New-Orders per minute."""
        return self.latency[NEW_ORDER].count * 60.0 / self.duration

    def add(self, r: VuResult) -> None:
        for kind, hist in r.latency.items():
            self.latency[kind].merge(hist)
        for kind, n in r.retries.items():
            self.retries[kind] = self.retries.get(kind, 0) + n
        self.rolled_back += r.rolled_back
        self.errors += r.errors
        self.gave_up += r.gave_up
        self.skipped_districts += r.skipped_districts
        for second, (committed, new_orders) in enumerate(r.per_second):
            while len(self.per_second) <= second:
                self.per_second.append([0, 0])
            self.per_second[second][0] += committed
            self.per_second[second][1] += new_orders
        for second, hist in enumerate(r.second_latency):
            while len(self.second_latency) <= second:
                self.second_latency.append(Histogram())
            self.second_latency[second].merge(hist)
        if r.fatal:
            self.failures.append(f"virtual user {r.index + 1}: {r.fatal}")
        elif r.errors or r.gave_up:
            self.failures.append(f"virtual user {r.index + 1}: {r.errors + r.gave_up} failed transaction(s), "
                                 f"first: {r.first_error}")

    def write_series(self, path: Path, rampup: float) -> Path:
        """Per-second throughput: second, phase (rampup/measured), committed, new orders, rates per minute."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(["second", "phase", "committed", "new_orders", "tpm_rate", "nopm_rate"])
            for second, (committed, new_orders) in enumerate(self.per_second):
                phase = "rampup" if second < rampup else "measured"
                out.writerow([second, phase, committed, new_orders, committed * 60, new_orders * 60])
        return path


    def append_series(self, path: Path, round: int) -> Path:
        """Per-second throughput of one slice of the interleaved schedule, appended with its round."""
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        with open(path, "a", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            if new:
                out.writerow(["round", "second", "committed", "new_orders", "tpm_rate", "nopm_rate"])
            for second, (committed, new_orders) in enumerate(self.per_second):
                out.writerow([round, second, committed, new_orders, committed * 60, new_orders * 60])
        return path


def vu_configs(opts: TpccOptions, vus: int, seed: int, procedures: bool, nodes: int = 1) -> list[VuConfig]:
    """VU i gets home warehouse (i mod W) + 1, as HammerDB assigns them; with ``spread = all`` it connects to node
    (i mod N) + 1 of the ``nodes`` that serve clients (round-robin), else to node 1."""
    spread = nodes if opts.spread == "all" else 1
    return [VuConfig(i, Terminal(i % opts.warehouses + 1, opts.warehouses), seed * 1000 + i, opts.rampup,
                     opts.duration, opts.keying_thinking, opts.think_scale, opts.max_retries, opts.lock_wait,
                     procedures, i % spread) for i in range(vus)]


def _receive(pipes: dict[Any, int], want: str, deadline: float, out: dict[int, Any]) -> None:
    """Collect one message per pipe until ``deadline``; a "done" while waiting for "ready" is kept too."""
    waiting = dict(pipes)
    while waiting and time.monotonic() < deadline:
        for conn in wait(list(waiting), timeout=max(0.0, deadline - time.monotonic())):
            index = waiting.pop(conn)
            try:
                kind, payload = conn.recv()
            except EOFError:
                kind, payload = "done", None
            if kind == want or kind == "done":
                out[index] = (kind, payload)


def _sleep_until(moment: float, procs: list[Any]) -> bool:
    """Sleep until ``moment``; False as soon as a virtual user has exited early."""
    while True:
        left = moment - time.monotonic()
        if left <= 0:
            return True
        if any(p.exitcode is not None for p in procs):
            return False
        time.sleep(min(left, 0.25))


def run_step(instance: Instance, dialect: Dialect, opts: TpccOptions, vus: int, seed: int,
             mark: Callable[[str | None], None] | None = None) -> StepResult:
    """Run ``vus`` virtual users for ramp-up + duration; the server is attributed to ``vu<N>`` while measured."""
    ctx = multiprocessing.get_context("fork")
    go, abort, start = ctx.Event(), ctx.Event(), ctx.Value("d", 0.0)
    result = StepResult(vus, opts.duration)
    procs, pipes = [], {}
    try:
        for cfg in vu_configs(opts, vus, seed, resolve_mode(opts.mode, dialect) == "procedures",
                              instance.client_nodes()):
            receiver, sender = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=vu_main, args=(instance, dialect, cfg, sender, go, start, abort),
                               name=f"tdebench-tpcc-vu{cfg.index + 1}", daemon=True)
            proc.start()
            sender.close()
            procs.append(proc)
            pipes[receiver] = cfg.index
        own_processes(p.pid for p in procs)  # each leaves by itself if tdebench is killed; cleanup ends the rest
        _run(result, procs, pipes, opts, go, start, abort, mark)
    finally:
        abort.set()
        go.set()
        if mark:
            mark(None)
        reap(procs)
        for conn in pipes:
            conn.close()
    return result


def _run(result: StepResult, procs: list[Any], pipes: dict[Any, int], opts: TpccOptions, go: Any, start: Any,
         abort: Any, mark: Callable[[str | None], None] | None) -> None:
    ready: dict[int, Any] = {}
    _receive(pipes, "ready", time.monotonic() + CONNECT_TIMEOUT, ready)
    early = {i: m for i, m in ready.items() if m[0] == "done"}
    if len(ready) < len(pipes) or early:
        abort.set()
        go.set()
        for kind, payload in early.values():
            if payload is not None:
                result.add(payload)
        missing = len(pipes) - len(ready)
        if missing:
            result.failures.append(f"{missing} virtual user(s) did not connect within {CONNECT_TIMEOUT:.0f} s")
        return
    start.value = time.monotonic() + 0.1
    go.set()
    measured_from = start.value + opts.rampup
    end = measured_from + opts.duration
    ok = _sleep_until(measured_from, procs)
    if ok and mark:
        mark(f"vu{result.vus}")
    ok = ok and _sleep_until(end, procs)
    if mark:
        mark(None)
    if not ok:
        abort.set()  # a virtual user died: the step is lost, stop the others now
    done: dict[int, Any] = {}
    _receive(pipes, "done", max(end, time.monotonic()) + opts.stop_grace, done)
    for index in sorted(done):
        if done[index][1] is None:
            result.failures.append(f"virtual user {index + 1} exited without a result")
        else:
            result.add(done[index][1])
    if len(done) < len(pipes):
        result.failures.append(f"{len(pipes) - len(done)} virtual user(s) still busy {opts.stop_grace:.0f} s after "
                               "the end of the step (stopped)")


def reap(procs: list[Any]) -> None:
    """Wait for every virtual user; terminate, then kill, the ones that do not stop."""
    for proc in procs:
        proc.join(timeout=10)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)
