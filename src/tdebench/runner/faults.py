"""``--fault``: a node of every config's cluster killed during its trial of one measured block, then rejoined.

The trial runs as usual while a thread waits until the fault's time, kills the node (``Cluster.kill_node`` of the
instance's :meth:`~tdebench.api.engine.Instance.cluster`), starts it again and waits until it serves
(``Cluster.rejoin_node``); the trial ends only once the node is back,
so the next trial starts with the whole cluster. What the run records (docs/faults.md): rows of test ``fault``
(step ``kill-node``: when, seconds to rejoin, commits per second before the kill and while the node was out),
an entry in the manifest's ``faults`` (the transfer: IST or SST, the node, the trial's headline value), and the
trial's rows with status ``fault``: shown in the report, left out of every interval and test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tdebench.api.cluster import Cluster
from tdebench.api.faults import KEYSERVER_DOWN, Fault, outage_text
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.encryption import redact
from tdebench.errors import UsageError
from tdebench.runner.keyserver.outage import Outage

STATUS = "fault"  # the status of a flagged trial's rows (docs/result-format.md)
TEST, STEP = "fault", "kill-node"
# the rows of test fault, step <kind>, a flagged trial gets (docs/faults.md)
METRICS = (("at", "s"), ("seconds_to_synced", "s"), ("commits_per_s_before", "txn/s"),
           ("commits_per_s_while_out", "txn/s"), ("files_received", "files"), ("first_error_after_s", "s"),
           ("down_within_trial_s", "s"), ("probes_ok", "count"), ("probes_failed", "count"),
           ("restart_refused", "flag"), ("key_server_back_s", "s"), ("database_back_s", "s"),
           ("rows_counted", "rows"), ("rows_equal", "flag"))
JOIN_TIMEOUT = 900.0  # a rejoin waits at most 180 s for Synced after a recovery of at most 180 s


def check_plan(plan: RunPlan) -> None:
    """Before any work: every config's engine can suffer the fault (``Engine.faults``, from its cluster class), and
    its node exists."""
    from tdebench.engines import get_engine

    fault = plan.fault_spec
    if fault is None:
        return
    if fault.kind == KEYSERVER_DOWN:
        check_outage(plan)
        return
    for config in plan.configs:
        engine = get_engine(config.engine)
        if fault.kind not in engine.faults:
            able = _engines_with(fault.kind)
            raise UsageError(f"--fault {fault.kind} does not apply to '{config.label}': engine {config.engine} "
                             "declares no such fault", f"use --engine {' or '.join(able) or '(none can)'}, or "
                                                       "leave --fault out")
        engine.check_fault(fault.kind, fault.node, config)


def check_outage(plan: RunPlan) -> None:
    """``keyserver-down``: the run's own key server, and a config that keeps its keys on it."""
    if plan.key_server:
        raise UsageError("--fault keyserver-down stops the run's own key server, and --key-server names yours, "
                         "which tdebench only reads", "leave out --key-server (the run starts its own) or --fault")
    if not any(c.keys != "file" and not c.spec.is_plain for c in plan.configs):
        raise UsageError("--fault keyserver-down: no config keeps its keys on a key server",
                         "add --keys openbao (or file,openbao), e.g. --encryption tde:aes-256-cbc --keys openbao")


def _engines_with(kind: str) -> list[str]:
    from tdebench.engines import engine_choices, get_engine

    return [n for n in engine_choices() if kind in get_engine(n).faults]


class FaultRunner:
    """Wraps the trials of the fault's block (the orchestrator hands every trial through :meth:`trial`)."""

    def __init__(self, plan: RunPlan, manifest: dict[str, Any], message: Callable[[str], None], keys: Any = None,
                 probe_table: Callable[[], str] = lambda: "") -> None:
        self.fault: Fault | None = plan.fault_spec
        self.manifest = manifest
        self.message = message
        self.planned: float | None = None
        self.keys = keys  # the run's key servers (keyserver-down)
        self.probe_table = probe_table  # a table of the workload the outage probe reads

    def check(self, planned_seconds: float | None) -> None:
        """Before any work: a share of the trial needs the workload's planned trial length."""
        self.planned = planned_seconds
        if self.fault is not None and self.fault.at_seconds(planned_seconds) is None:
            raise UsageError(f"--fault {self.fault.kind}@{self.fault.share * 100:g}%: this workload does not know "
                             "how long its trial will be", "give the time in seconds, e.g. --fault kill-node@20s")

    def trial(self, state: ConfigState, block: Block, rec: Recorder, run: Callable[[], TrialResult],
              headline: tuple[str, str, str] | None) -> TrialResult:
        """``run()`` (the workload's trial), with the fault injected when it is this block's."""
        fault = self.fault
        if fault is None or block.number != fault.block or block.warmup:
            return run()
        at = fault.at_seconds(self.planned) or 0.0
        injector = self._injector(state, fault, at)
        if injector is None:  # keyserver-down: a config whose keys are not on the key server runs as usual
            return run()
        injector.start()
        error: Exception | None = None
        try:
            result = run()
        except Exception as exc:  # noqa: BLE001 - recorded with the fault's facts, then raised as it was
            error, result = exc, TrialResult()
        finally:
            facts = injector.finish()
        self._record(state, block, rec, result, facts, headline)
        if error is not None:
            raise error
        return result

    def _injector(self, state: ConfigState, fault: Fault, at: float) -> "Injector | Outage | None":
        """The fault's thread for ``state``'s trial (None: the fault does not touch this config)."""
        if fault.kind == KEYSERVER_DOWN:
            if self.keys is None or self.keys.private is None or state.label not in self.keys.access:
                return None
            self.message(f"{state.label}: the key server goes down ({fault.mode}) at {at:.1f} s")
            return Outage(state, self.keys.private, fault.mode, at, f"SELECT COUNT(*) FROM {self.probe_table()}")
        injector = Injector(state, fault, at)
        self.message(f"{state.label}: {fault.kind} node {injector.node} at {at:.1f} s")
        return injector

    def _record(self, state: ConfigState, block: Block, rec: Recorder, result: TrialResult, facts: dict[str, Any],
                headline: tuple[str, str, str] | None) -> None:
        if facts.get("error"):
            result.failures.append(f"{self.fault}: {facts['error']}")
        if facts.get("injected"):
            rec.status = STATUS
            rec.rows[:] = [replace(r, status=STATUS) if r.status == "ok" else r for r in rec.rows]
            for metric, unit in METRICS:
                value = facts.get(metric)
                if isinstance(value, (int, float)):  # a bool counts as 1 or 0
                    rec.add(TEST, self.fault.kind if self.fault else STEP, metric, float(value), unit)
        if headline is not None:
            values = [r.value for r in rec.rows if (r.test, r.step, r.metric) == headline]
            facts["headline"] = {"test": headline[0], "step": headline[1], "metric": headline[2],
                                 "value": values[-1] if values else None}
        entry = {"config": state.label, "block": block.number, "fault": str(self.fault), "flagged": rec.status == STATUS,
                 **facts}
        self.manifest.setdefault("faults", []).append(entry)
        how = (outage_text(facts) if self.fault and self.fault.kind == KEYSERVER_DOWN else
               f"rejoined by {facts.get('transfer')} in {facts.get('seconds_to_synced')} s") \
            if facts.get("injected") else facts.get("note", "not injected")
        flag = "trial flagged" if rec.status == STATUS else "trial not flagged"
        self.message(f"{state.label} block {block.number}: {facts.get('node')} {how}; {flag}")


class Injector:
    """The thread that kills and rejoins one node during one trial."""

    def __init__(self, state: ConfigState, fault: Fault, at: float) -> None:
        cluster = state.instance.cluster()
        if cluster is None:  # check_plan refuses such a config before any work
            raise UsageError(f"--fault {fault.kind}: '{state.label}' is not a cluster", "leave --fault out")
        self.cluster: Cluster = cluster
        self.fault = fault
        self.at = at
        self.node = fault.node or cluster.size()
        self.done = threading.Event()
        self.facts: dict[str, Any] = {"node": f"node{self.node}", "at": round(at, 3), "injected": False}
        self.thread = threading.Thread(target=self._work, name="tdebench-fault", daemon=True)
        self.marks: list[tuple[float, int]] = []  # (monotonic, committed): start, kill, synced

    def start(self) -> None:
        self.marks.append((time.monotonic(), self._committed()))
        self.thread.start()

    def _committed(self) -> int:
        try:
            return self.cluster.committed_count()
        except Exception:  # noqa: BLE001 - a rate is left out rather than the trial failed
            return -1

    def _work(self) -> None:
        if self.done.wait(self.at):
            self.facts["note"] = f"not injected: the trial ended before {self.at:.1f} s"
            return
        try:
            self.marks.append((time.monotonic(), self._committed()))
            self.cluster.kill_node(self.node)
            self.facts["injected"] = True
            self.facts.update(self.cluster.rejoin_node(self.node, full_transfer=self.fault.rejoin == "sst"))
            self.marks.append((time.monotonic(), self._committed()))
        except Exception as exc:  # noqa: BLE001 - the trial fails with the reason, the run goes on
            self.facts["error"] = f"{type(exc).__name__}: {redact(str(exc))}"

    def finish(self) -> dict[str, Any]:
        """After the trial: wait for the rejoin, then the throughput before the kill and while the node was out
        (until it was back or the trial ended, whichever came first)."""
        ended = (time.monotonic(), self._committed())
        self.done.set()
        self.thread.join(JOIN_TIMEOUT)
        if self.thread.is_alive():
            self.facts["error"] = f"node {self.node} was not back within {JOIN_TIMEOUT:.0f} s of the trial's end"
        if len(self.marks) >= 2:
            self.facts["commits_per_s_before"] = _rate(self.marks[0], self.marks[1])
            back = self.marks[2] if len(self.marks) > 2 and self.marks[2][0] < ended[0] else ended
            self.facts["commits_per_s_while_out"] = _rate(self.marks[1], back)
            self.facts["out_within_trial_s"] = round(back[0] - self.marks[1][0], 3)
        return self.facts


def _rate(first: tuple[float, int], last: tuple[float, int]) -> float | None:
    seconds = last[0] - first[0]
    if first[1] < 0 or last[1] < 0 or seconds <= 0:
        return None
    return round((last[1] - first[1]) / seconds, 3)
