"""Where and how eagerly the measured processes run: ``--pin`` and ``--nice``.

``--pin``: tdebench (the client) on one CPU, every server on the others, so that neither migrates. The servers
keep the CPU the data disk's interrupts are routed to (:mod:`tdebench.runner.irqcpu`): a read then completes on the
CPU where its server waits; tdebench takes the first CPU that does not take them (else the first CPU). ``--nice N``:
tdebench and every server at nice value N (e.g. -10: other processes of a shared machine then get much less of
the CPUs while a statement runs; negative values need root).

Affinity and nice values are per thread on Linux: every thread of every process is set (threads and processes
created later inherit them from their creator; a server restarted after a failure is set again when its next
trial starts). An embedded engine (SQLite) runs inside tdebench, so it shares the client's CPU. tdebench's own
settings are put back when the run ends. Whether either helps is measured in docs/precision.md; neither is the
default. Under Linux's autogroup scheduler a nice value only ranks processes inside one session, so ``--nice``
also sets the autogroup nice value of tdebench's session and of every server's (each server starts a session).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tdebench.api.trial import ConfigState
from tdebench.errors import EnvironmentProblem
from tdebench.measure.proctime import descendants
from tdebench.runner.irqcpu import DiskInterrupts, disk_interrupts


#: the split of a --pin run, taken before tdebench pins itself (after that its own affinity is the client's CPUs)
_RUN_SPLIT: tuple[list[int], list[int]] | None = None


def _forget_split() -> None:
    global _RUN_SPLIT
    _RUN_SPLIT = None


def cpu_split(disk: DiskInterrupts | None = None) -> tuple[list[int], list[int]]:
    """(client CPUs, server CPUs) from the CPUs this process may use: the client on the first CPU that does not take
    ``disk``'s interrupts, else on the first; EnvironmentProblem with fewer than 2."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise EnvironmentProblem(f"--pin needs at least 2 CPUs, and this process may use {len(cpus)}",
                                 "leave --pin out on this machine")
    quiet = [c for c in cpus if disk is None or c not in disk.cpus]
    client = quiet[0] if quiet else cpus[0]
    return [client], [c for c in cpus if c != client]


def _each_thread(pid: int, apply: Callable[[int], object]) -> int:
    """``apply`` every thread id of process ``pid``; how many it succeeded for (threads that exited meanwhile, or
    are not ours to change, are skipped)."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return 0
    count = 0
    for tid in tids:
        try:
            apply(tid)
            count += 1
        except OSError:
            continue
    return count


def pin_threads(pid: int, cpus: list[int]) -> int:
    """Pin every thread of process ``pid`` to ``cpus``; how many threads were pinned."""
    return _each_thread(pid, lambda tid: os.sched_setaffinity(tid, cpus))


def pin_tree(roots: list[int], cpus: list[int]) -> int:
    """Pin every thread of ``roots`` and their descendants to ``cpus``; how many threads were pinned."""
    return sum(pin_threads(pid, cpus) for pid in descendants(roots))


def renice_threads(pid: int, value: int) -> int:
    """Set every thread of process ``pid`` to nice ``value``; how many threads were set."""
    return _each_thread(pid, lambda tid: os.setpriority(os.PRIO_PROCESS, tid, value))


def set_autogroup_nice(pid: int, value: int) -> int | None:
    """Set the autogroup nice value of ``pid``'s session (the share of the CPUs it gets against other sessions);
    the value it had, or None where there are no autogroups or it may not be changed."""
    path = f"/proc/{pid}/autogroup"
    try:
        with open(path) as fh:
            before = int(fh.read().split("nice")[1])
        with open(path, "w") as fh:
            fh.write(str(value))
        return before
    except (OSError, ValueError, IndexError):
        return None


def check_nice(value: int | None) -> None:
    """EnvironmentProblem before any work when this process may not take nice ``value``."""
    if value is None or value >= os.getpriority(os.PRIO_PROCESS, 0) or os.geteuid() == 0:
        return
    raise EnvironmentProblem(f"--nice {value} needs root (a lower nice value than this process has)",
                             "run as root, or give a nice value of 0 or more, or leave --nice out")


def _server_pids(state: ConfigState) -> list[int]:
    if not state.instance.scannable:
        return []
    try:
        return [p for p in state.instance.server_pids() if p != os.getpid()]
    except Exception:  # noqa: BLE001 - a server being restarted: set at its next trial
        return []


def pin_servers(state: ConfigState) -> int:
    """(Re)pin one config's server processes to the server CPUs (0 for embedded or remote engines)."""
    pids = _server_pids(state)
    return pin_tree(pids, (_RUN_SPLIT or cpu_split())[1]) if pids else 0


def renice_servers(state: ConfigState, value: int) -> int:
    """(Re)set one config's server threads, and their sessions' autogroups, to nice ``value`` (0 for embedded or
    remote engines)."""
    pids = _server_pids(state)
    for pid in pids:
        set_autogroup_nice(pid, value)  # a server's session is its own: nothing to put back after it stops
    return sum(renice_threads(pid, value) for pid in descendants(pids))


def place_servers(state: ConfigState, pin: bool, nice: int | None) -> None:
    """At the start of every trial: a restarted server gets the run's CPUs and nice value again."""
    if pin:
        pin_servers(state)
    if nice is not None:
        renice_servers(state, nice)


def pin_run(states: list[ConfigState], stack: ExitStack, data_dir: Path | None = None) -> dict[str, Any]:
    """Pin tdebench and every server (the servers with the interrupts of ``data_dir``'s disk); tdebench's own
    affinity comes back when ``stack`` closes."""
    global _RUN_SPLIT
    disk = disk_interrupts(data_dir) if data_dir is not None else None
    client, servers = _RUN_SPLIT = cpu_split(disk)  # once: tdebench's own CPUs are the client's from here on
    own = sorted(os.sched_getaffinity(0))
    stack.callback(pin_threads, os.getpid(), own)
    stack.callback(_forget_split)
    threads = pin_threads(os.getpid(), client)
    facts: dict[str, Any] = {"client": client, "servers": servers, "client_threads": threads,
                             "server_threads": {s.label: pin_servers(s) for s in states}}
    if disk is not None:
        facts["disk_interrupts"] = {"device": disk.device, "irqs": list(disk.irqs), "cpus": list(disk.cpus)}
    return facts


def renice_run(states: list[ConfigState], value: int, stack: ExitStack) -> dict[str, Any]:
    """tdebench and every server at nice ``value``; tdebench's own nice value comes back when ``stack`` closes."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    stack.callback(renice_threads, os.getpid(), own)
    group = set_autogroup_nice(os.getpid(), value)
    if group is not None:
        stack.callback(set_autogroup_nice, os.getpid(), group)
    return {"value": value, "client_threads": renice_threads(os.getpid(), value),
            "autogroup": group is not None,
            "server_threads": {s.label: renice_servers(s, value) for s in states}}
