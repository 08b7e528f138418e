"""One virtual user: a forked process with its own connection and home warehouse.

It waits for the common start time, runs the transaction mix (a shuffled 100-card deck: 45 New-Order,
43 Payment, 4 each of Order-Status, Delivery and Stock-Level) until the end of the step, retrying
deadlocks and serialization failures, and sends one :class:`VuResult` back through its pipe.
Only transactions that finish inside the measured window (after the ramp-up) count.
"""

from __future__ import annotations

import os
import random
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.encryption import redact
from tdebench.lifeline import forked_child
from tdebench.workloads.tpcc import procs
from tdebench.workloads.tpcc.histogram import Histogram
from tdebench.workloads.tpcc.rand import C_LAST_RUN, TpccRandom
from tdebench.workloads.tpcc.session import RETRY_KINDS, Session, retry_kind
from tdebench.workloads.tpcc.txns import KINDS, MIX, RUNNERS, WRITES, Inputs, Rollback, Terminal, draw

# TPC-C clause 5.2.5: minimum keying time and mean think time per transaction (seconds)
KEYING = {"new_order": 18.0, "payment": 3.0, "order_status": 2.0, "delivery": 2.0, "stock_level": 2.0}
THINK = {"new_order": 12.0, "payment": 12.0, "order_status": 10.0, "delivery": 5.0, "stock_level": 5.0}


@dataclass(frozen=True)
class VuConfig:
    """What one virtual user is told."""

    index: int
    terminal: Terminal
    seed: int
    rampup: float
    duration: float
    keying_thinking: bool = False
    think_scale: float = 1.0
    max_retries: int = 20
    lock_wait: float = 50.0
    procedures: bool = False
    node: int = 0  # the node it connects to (0-based; a cluster's, with spread = all)


@dataclass
class VuResult:
    """What one virtual user measured (measured window only, except the per-second series)."""

    index: int
    latency: dict[str, Histogram] = field(default_factory=lambda: {k: Histogram() for k in KINDS})
    rolled_back: int = 0
    retries: dict[str, int] = field(default_factory=lambda: {k: 0 for k in RETRY_KINDS})  # of measured txns
    errors: int = 0
    gave_up: int = 0
    first_error: str = ""
    skipped_districts: int = 0
    per_second: list[list[int]] = field(default_factory=list)  # [committed, new_orders] per second from start
    second_latency: list[Histogram] = field(default_factory=list)  # latencies of the commits of each second
    fatal: str = ""

    def tick(self, second: int, kind: str, elapsed_ns: int | None = None) -> None:
        while len(self.per_second) <= second:
            self.per_second.append([0, 0])
        self.per_second[second][0] += 1
        if kind == "new_order":
            self.per_second[second][1] += 1
        if elapsed_ns is not None:
            while len(self.second_latency) <= second:
                self.second_latency.append(Histogram())
            self.second_latency[second].add(elapsed_ns)


class GaveUp(Exception):
    """A transaction still failed with a retryable error after ``max_retries`` retries."""


class Deck:
    """TPC-C's card deck (clause 5.2.4.2): exact mix proportions in every 100 transactions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.cards: list[str] = []

    def draw(self) -> str:
        if not self.cards:
            self.cards = [k for k, n in MIX.items() for _ in range(n)]
            self.rng.shuffle(self.cards)
        return self.cards.pop()


def _safe_rollback(s: Session) -> bool:
    try:
        s.rollback()
        return True
    except Exception:  # noqa: BLE001 - the connection is gone
        return False


def execute(s: Session, t: Terminal, x: Inputs, retries: dict[str, int], max_retries: int) -> tuple[str, int]:
    """Run one transaction to commit or intended rollback, retrying retryable errors (counted per kind in
    ``retries``); returns (outcome, districts skipped by Delivery)."""
    attempts = 0
    while True:
        try:
            if s.procedures:
                return procs.call(s, t, x)
            s.begin(x.kind in WRITES)
            extra = RUNNERS[x.kind](s, t, x)
            s.commit()
            return "commit", int(extra or 0)
        except Rollback:
            s.rollback()
            return "rollback", 0
        except Exception as exc:
            kind = retry_kind(exc)
            if not _safe_rollback(s) or kind is None:
                raise
            retries[kind] = retries.get(kind, 0) + 1
            attempts += 1
            if attempts > max_retries:
                raise GaveUp(f"{x.kind} failed {attempts} times in a row: {exc}") from exc
            time.sleep(0.001 * min(attempts, 10))


def _pause(seconds: float, end: float) -> None:
    time.sleep(max(0.0, min(seconds, end - time.monotonic())))


class Mix:
    """A virtual user's stream of transactions: its deck and random inputs continue from one window to the next,
    so that the slices of an interleaved step draw the same sequence as one long step would."""

    def __init__(self, cfg: VuConfig) -> None:
        self.cfg = cfg
        self.rng = TpccRandom(cfg.seed, c_last=C_LAST_RUN)
        self.deck = Deck(self.rng.rng)

    def run(self, s: Session, start: float, window_start: float, end: float, res: VuResult, abort: Any) -> None:
        """Transactions from now until ``end``; those that finish in [``window_start``, ``end``) count, and the
        per-second series counts seconds from ``start``."""
        cfg = self.cfg
        while time.monotonic() < end and not abort.is_set():
            kind = self.deck.draw()
            x = draw(kind, self.rng, cfg.terminal)
            if cfg.keying_thinking:
                _pause(KEYING[kind] * cfg.think_scale, end)
            began, retries = time.perf_counter_ns(), {}
            try:
                outcome, skipped = execute(s, cfg.terminal, x, retries, cfg.max_retries)
            except GaveUp as exc:
                res.gave_up += 1
                res.first_error = res.first_error or redact(str(exc))[:500]
                continue
            except Exception as exc:  # noqa: BLE001 - counted; the trial fails on any error
                res.errors += 1
                res.first_error = res.first_error or f"{kind}: {type(exc).__name__}: {redact(str(exc))[:400]}"
                if not _safe_rollback(s):
                    raise
                continue
            _count(res, kind, outcome, skipped, retries, time.perf_counter_ns() - began, start, window_start, end)
            if cfg.keying_thinking:
                mean = THINK[kind] * cfg.think_scale
                _pause(min(self.rng.rng.expovariate(1 / mean), 10 * mean), end)


def _count(res: VuResult, kind: str, outcome: str, skipped: int, retries: dict[str, int], elapsed: int,
           start: float, window_start: float, end: float) -> None:
    """Count one finished transaction in ``res`` if it finished inside the measured window."""
    done = time.monotonic()
    if window_start <= done < end:
        for retry, n in retries.items():
            res.retries[retry] += n
        if outcome == "commit":
            res.latency[kind].add(elapsed)
            res.skipped_districts += skipped
        else:
            res.rolled_back += 1
    if outcome == "commit" and done < end:
        res.tick(int(done - start), kind, elapsed)


def run_mix(s: Session, cfg: VuConfig, start: float, res: VuResult, abort: Any) -> None:
    """The transaction loop from ``start`` until the end of the measured window."""
    Mix(cfg).run(s, start, start + cfg.rampup, start + cfg.rampup + cfg.duration, res, abort)


def connect(instance: Instance, cfg: VuConfig) -> Any:
    """The virtual user's connection: to node 1 (``connect()``), or to its node of a cluster."""
    return instance.connect() if cfg.node == 0 else instance.connect_node(cfg.node)


def vu_main(instance: Instance, dialect: Dialect, cfg: VuConfig, channel: Any, go: Any, start: Any, abort: Any) -> None:
    """Entry point of a virtual-user process: connect, report ready, run, report the result."""
    res = VuResult(cfg.index)
    session = None
    try:
        forked_child()
        session = Session(connect(instance, cfg), dialect, cfg.lock_wait, cfg.procedures)
        channel.send(("ready", os.getpid()))
        go.wait()
        if not abort.is_set():
            run_mix(session, cfg, start.value, res, abort)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the trial
        res.fatal = f"{type(exc).__name__}: {redact(str(exc))[:600]}"
        if not isinstance(exc, Exception):
            res.fatal += " " + redact(traceback.format_exc()[-600:])
    finally:
        if session is not None:
            session.close()
    try:
        channel.send(("done", res))
    finally:
        channel.close()


def vu_serve(instance: Instance, dialect: Dialect, cfg: VuConfig, channel: Any, abort: Any) -> None:
    """Entry point of a virtual user of the interleaved schedule: connect, report ready, then run one window per
    ``("run", seconds, measured)`` command until ``("stop",)``, answering each with ``("done", VuResult)`` (or
    ``("fatal", text)`` when its connection is lost)."""
    session = None
    try:
        forked_child()
        session = Session(connect(instance, cfg), dialect, cfg.lock_wait, cfg.procedures)
        mix = Mix(cfg)
        channel.send(("ready", os.getpid()))
        while True:
            command = channel.recv()
            if command[0] != "run" or abort.is_set():
                break
            _, seconds, measured = command
            res = VuResult(cfg.index)
            start = time.monotonic()
            end = start + seconds
            mix.run(session, start, start if measured else end, end, res, abort)
            channel.send(("done", res))
    except EOFError:
        pass  # the parent went away: nothing to report to
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the trial
        fatal = f"{type(exc).__name__}: {redact(str(exc))[:600]}"
        try:
            channel.send(("fatal", fatal))
        except OSError:
            pass
    finally:
        if session is not None:
            session.close()
        channel.close()
