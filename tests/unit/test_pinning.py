"""--pin: the client/server split is taken once per run, before tdebench pins itself, so that servers restarted
later (every block, --restart-twins) still go to the server CPUs."""

from __future__ import annotations

import os
from contextlib import ExitStack
from types import SimpleNamespace

from tdebench.runner import pinning


def test_servers_keep_their_cpus_after_tdebench_pinned_itself(monkeypatch):
    allowed = {0, 1}
    pinned: dict[int, list[int]] = {}

    def setaffinity(tid: int, cpus: list[int]) -> None:
        pinned[tid] = list(cpus)
        if tid == os.getpid():  # the process's own affinity is what sched_getaffinity(0) reads back
            allowed.clear()
            allowed.update(cpus)

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(allowed))
    monkeypatch.setattr(os, "sched_setaffinity", setaffinity)
    monkeypatch.setattr(pinning, "_each_thread", lambda pid, apply: apply(pid) or 1)
    monkeypatch.setattr(pinning, "descendants", lambda roots: list(roots))
    server = SimpleNamespace(instance=SimpleNamespace(scannable=True, server_pids=lambda: [4242]), label="s")
    with ExitStack() as stack:
        facts = pinning.pin_run([server], stack)  # type: ignore[list-item]
        assert facts["client"] == [0] and facts["servers"] == [1] and pinned[4242] == [1]
        pinned.clear()
        assert pinning.pin_servers(server) == 1 and pinned[4242] == [1]  # a restarted server, later in the run
    assert pinned[os.getpid()] == [0, 1] and pinning._RUN_SPLIT is None  # tdebench's own CPUs given back
