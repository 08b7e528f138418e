"""Page-cache counts of every apsw connection to one database (``sqlite3_db_status``, which apsw exposes as
``Connection.status``), summed across threads and forked processes (TPC-C's virtual users).

As for SQLCipher: a cache miss reads a page from the file (which the cipher decrypts and authenticates), a page
written is encrypted. Each connection has a slot in a shared (fork-inherited) table: it publishes its counts
there before each statement, and folds its final counts into the table's total row when it closes. The totals
are the total row, the slots of live connections in other processes (at most one statement behind) and this
process's live connections read directly.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import threading
import weakref
from dataclasses import dataclass

import apsw
import numpy as np

from tdebench.proctree import descendants

SLOTS = 2048  # connections open at once (TPC-C allows 1000 virtual users)
_OPS = (apsw.SQLITE_DBSTATUS_CACHE_HIT, apsw.SQLITE_DBSTATUS_CACHE_MISS, apsw.SQLITE_DBSTATUS_CACHE_WRITE)
_TOTAL = SLOTS  # the last row holds closed connections' counts


@dataclass(frozen=True)
class PageTotals:
    hits: int = 0
    misses: int = 0
    writes: int = 0


def status(conn: apsw.Connection) -> tuple[int, int, int]:
    """(cache hits, cache misses, pages written) of one open connection."""
    hits, misses, writes = (conn.status(op)[0] for op in _OPS)
    return hits, misses, writes


class PageCounts:
    """Shared table of per-connection counts for one database: rows of (pid, live, hits, misses, writes)."""

    def __init__(self) -> None:
        self._buffer = mmap.mmap(-1, (SLOTS + 1) * 5 * 8)  # MAP_SHARED | MAP_ANONYMOUS: shared with forks
        self._table = np.frombuffer(self._buffer, dtype=np.int64).reshape(SLOTS + 1, 5)
        self._lock = multiprocessing.get_context("fork").Lock()
        self._after_fork()
        _ALL.add(self)

    def _after_fork(self) -> None:
        """This process's live connections (a forked child starts with none of its parent's) and their lock."""
        self._local: dict[int, tuple[int, int, weakref.ref]] = {}  # id(conn) -> (slot, pid, conn)
        self._thread_lock = threading.Lock()

    def adopt(self, conn: apsw.Connection) -> int:
        """A slot for a new connection."""
        with self._lock:
            free = np.flatnonzero(self._table[:SLOTS, 1] == 0)
            if free.size == 0:
                raise RuntimeError(f"more than {SLOTS} SQLite connections open at once: their counts cannot be kept")
            slot = int(free[0])
            self._table[slot] = (os.getpid(), 1, 0, 0, 0)
        with self._thread_lock:
            self._local[id(conn)] = (slot, os.getpid(), weakref.ref(conn))
        return slot

    def publish(self, conn: apsw.Connection, slot: int) -> None:
        self._table[slot, 2:] = status(conn)

    def release(self, conn: apsw.Connection, slot: int) -> None:
        """Fold a closing connection's counts into the total and free its slot."""
        final = status(conn)
        with self._thread_lock:
            with self._lock:
                self._table[_TOTAL, 2:] += final
                self._table[slot] = 0
            self._local.pop(id(conn), None)

    def totals(self) -> PageTotals:
        pid = os.getpid()
        mine = np.zeros(3, dtype=np.int64)
        with self._thread_lock:
            for slot, owner, ref in list(self._local.values()):
                conn = ref()
                if conn is not None and owner == pid:
                    mine += status(conn)
            with self._lock:
                table = self._table.copy()
        live = table[:SLOTS]
        others = live[(live[:, 1] == 1) & (live[:, 0] != pid)]
        sums = table[_TOTAL, 2:] + others[:, 2:].sum(axis=0) + mine
        return PageTotals(int(sums[0]), int(sums[1]), int(sums[2]))


_ALL: "weakref.WeakSet[PageCounts]" = weakref.WeakSet()
os.register_at_fork(after_in_child=lambda: [counts._after_fork() for counts in list(_ALL)])


def process_io() -> tuple[int, int]:
    """(rchar, wchar) of this process and its live children: bytes through read()/write(), cached or not."""
    import psutil

    total_r = total_w = 0
    for pid in descendants([os.getpid()]):
        try:
            io = psutil.Process(pid).io_counters()
        except (psutil.Error, AttributeError):
            continue
        total_r += io.read_chars
        total_w += io.write_chars
    return total_r, total_w
