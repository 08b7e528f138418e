"""``--pin``: tdebench (the client) on one CPU, every server on the others, so that neither migrates.

Affinity is per thread on Linux: every thread of every process is pinned (threads and processes created later
inherit it from their creator; a server restarted after a failure is pinned again when its next trial starts).
An embedded engine (SQLite) runs inside tdebench, so it shares the client's CPU. tdebench's own affinity is put
back when the run ends. Whether pinning helps is measured in docs/precision.md; it is not the default.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Any

from tdebench.api.trial import ConfigState
from tdebench.errors import EnvironmentProblem
from tdebench.measure.proctime import descendants


def cpu_split() -> tuple[list[int], list[int]]:
    """(client CPUs, server CPUs) from the CPUs this process may use; EnvironmentProblem with fewer than 2."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise EnvironmentProblem(f"--pin needs at least 2 CPUs, and this process may use {len(cpus)}",
                                 "leave --pin out on this machine")
    return cpus[:1], cpus[1:]


def pin_threads(pid: int, cpus: list[int]) -> int:
    """Pin every thread of process ``pid`` to ``cpus``; how many threads were pinned."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return 0
    count = 0
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
            count += 1
        except OSError:  # exited meanwhile, or not ours to pin
            continue
    return count


def pin_tree(roots: list[int], cpus: list[int]) -> int:
    """Pin every thread of ``roots`` and their descendants to ``cpus``; how many threads were pinned."""
    return sum(pin_threads(pid, cpus) for pid in descendants(roots))


def pin_servers(state: ConfigState) -> int:
    """(Re)pin one config's server processes to the server CPUs (0 for embedded or remote engines)."""
    if not state.instance.scannable:
        return 0
    try:
        pids = [p for p in state.instance.server_pids() if p != os.getpid()]
    except Exception:  # noqa: BLE001 - a server being restarted: pinned at its next trial
        return 0
    return pin_tree(pids, cpu_split()[1]) if pids else 0


def pin_run(states: list[ConfigState], stack: ExitStack) -> dict[str, Any]:
    """Pin tdebench and every server; tdebench's own affinity comes back when ``stack`` closes."""
    client, servers = cpu_split()
    own = sorted(os.sched_getaffinity(0))
    stack.callback(pin_threads, os.getpid(), own)
    threads = pin_threads(os.getpid(), client)
    return {"client": client, "servers": servers, "client_threads": threads,
            "server_threads": {s.label: pin_servers(s) for s in states}}
