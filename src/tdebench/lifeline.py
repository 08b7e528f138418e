"""Processes tdebench starts leave by themselves when tdebench is gone (a SIGKILL, the OOM killer): the kernel sends
them SIGKILL when their parent ends (``prctl(PR_SET_PDEATHSIG)``), and a child whose parent ended before it could
ask for that leaves at once (its parent is then no longer the recorded one).

Servers are not started this way: they run in their own sessions and are stopped in order by ``tdebench cleanup``.
The clients and helpers are: TPC-C's virtual users, the data generators' process pools, external tools
(sysbench, backup tools, data generators, mariadb-install-db).

The kernel ties the signal to the *thread* that forked the child, not to the process: a child forked from a
thread that ends before it would be killed with that thread. tdebench forks its clients and pools from the thread
that waits for them (the main thread of a run, or the thread blocked in ``subprocess.run``).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: a child between fork and exec only calls it


def die_with_parent(parent: int) -> None:
    """In a child right after fork: SIGKILL when the thread that forked it ends, and leave now when ``parent``
    (the process that forked it) has already ended."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def forked_child() -> None:
    """The first call of a Python child that tdebench forks (a virtual user, a pool's worker): it dies with its
    parent, leaves Ctrl-C to the parent (which stops it), and ends on SIGTERM and SIGHUP instead of running the
    parent's handlers (the CLI's stop every server)."""
    parent = multiprocessing.parent_process()
    die_with_parent(parent.pid if parent is not None and parent.pid is not None else os.getppid())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def helper_preexec(then: Callable[[], None] | None = None) -> Callable[[], None]:
    """``preexec_fn`` for ``subprocess``: the program it runs dies with this process (after ``then``, another
    preexec step). The kernel keeps the setting across exec, but not across a set-user-ID program."""
    parent = os.getpid()

    def preexec() -> None:
        if then is not None:
            then()
        die_with_parent(parent)

    return preexec
