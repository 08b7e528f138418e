"""--pin and --nice reach every thread of a process tree (affinity and nice values are per thread on Linux)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tdebench.errors import EnvironmentProblem
from tdebench.runner.pinning import check_nice, cpu_split, pin_tree, renice_threads

CHILD = ("import threading, time, subprocess, sys\n"
         "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
         "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
         "print(kid.pid, flush=True); time.sleep(30)\n")


@pytest.fixture
def tree():
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    grandchild = int(proc.stdout.readline())
    yield proc.pid, grandchild
    for pid in (grandchild, proc.pid):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    proc.wait()


def tids(pid: int) -> list[int]:
    return [int(t) for t in os.listdir(f"/proc/{pid}/task")]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_pin_reaches_every_thread_of_the_tree(tree) -> None:
    parent, grandchild = tree
    client, servers = cpu_split()
    assert client == sorted(os.sched_getaffinity(0))[:1] and set(servers).isdisjoint(client)
    count = pin_tree([parent], servers)
    threads = tids(parent) + tids(grandchild)
    assert count == len(threads) >= 3
    assert all(os.sched_getaffinity(t) == set(servers) for t in threads)


def test_renice_reaches_every_thread(tree) -> None:
    parent, _ = tree
    assert renice_threads(parent, 7) == len(tids(parent)) >= 2
    assert {os.getpriority(os.PRIO_PROCESS, t) for t in tids(parent)} == {7}


def test_a_lower_nice_value_needs_root(monkeypatch) -> None:
    check_nice(None)
    check_nice(19)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EnvironmentProblem, match="needs root"):
        check_nice(-5)
