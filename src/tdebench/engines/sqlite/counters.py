"""Page-cache counters of SQLite/SQLCipher connections: ``sqlite3_db_status`` summed over every connection.

The Python driver does not expose ``sqlite3_db_status``, so it is called through ctypes on the connection's
``sqlite3*`` handle: the first field after the object header of pysqlite's connection struct (CPython's
``_sqlite3`` and ``sqlcipher3`` alike). That layout is checked once per process in a child process (a wrong guess
could crash; the child takes that risk) and then on every connection, whose handle must name the file it opened
(``sqlite3_db_filename``). Where either check fails, nothing is counted here and the engine says so.

Counts per connection (``SQLITE_DBSTATUS_CACHE_HIT``/``_MISS``/``_WRITE``): page requests served from the
connection's page cache, page requests that read the page from the file (the OS page cache or the disk; each
one is a page SQLCipher decrypts and authenticates), pages written to the file (each one encrypted and MACed).

Connections live in tdebench's own threads and in forked processes (TPC-C virtual users), so each connection
publishes its counts into a slot of a shared memory table when a statement starts and when it closes;
:meth:`PageCounts.totals` adds the final counts of closed connections, the published counts of connections in
other processes (at most one statement behind) and reads this process's live connections directly.
"""

from __future__ import annotations

import ctypes
import mmap
import multiprocessing
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import sqlcipher3

from tdebench.engines.toolkit.process import own_path, run_group
from tdebench.proctree import descendants

CACHE_HIT, CACHE_MISS, CACHE_WRITE = 7, 8, 9  # SQLITE_DBSTATUS_* (sqlite3.h)
SLOTS = 2048  # connections open at once (TPC-C allows 1000 virtual users)
_FIELDS = 5  # owner pid, state (0 free, 1 live), hits, misses, writes
_TOTAL = SLOTS  # the last row holds closed connections' totals
_HANDLE_OFFSET = ctypes.sizeof(ctypes.c_ssize_t) * 2  # after ob_refcnt and ob_type


@dataclass(frozen=True)
class PageTotals:
    """Summed counts of all connections of one database."""

    hits: int = 0
    misses: int = 0
    writes: int = 0


@lru_cache(maxsize=1)
def _library() -> Any:
    """The SQLCipher library the driver is built with (its extension module exports the C API)."""
    lib = ctypes.CDLL(sqlcipher3._sqlite3.__file__)
    lib.sqlite3_db_status.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.sqlite3_db_status.restype = ctypes.c_int
    lib.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.sqlite3_db_filename.restype = ctypes.c_char_p
    return lib


_PROBE = """
import os, sys
import sqlcipher3
from tdebench.engines.sqlite import counters as sc
path = os.path.join(sys.argv[1], "probe.db")  # in the parent's directory: it removes it once this process is gone
conn = sqlcipher3.connect(path)
conn.execute("CREATE TABLE t (a)")
handle = sc.raw_handle(conn)
name = sc._library().sqlite3_db_filename(handle, b"main")
print("ok" if name and os.path.realpath(name.decode()) == os.path.realpath(path) else "mismatch")
conn.close()
"""


@lru_cache(maxsize=1)
def usable() -> str:
    """"" when connection handles can be read here; else why not (checked in a child process once)."""
    if sys.implementation.name != "cpython":
        return f"not CPython ({sys.implementation.name}): the driver's connection layout is unknown"
    try:
        code, out = _layout_check()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the layout check could not run ({exc})"
    if code != 0 or out.strip() != "ok":
        return f"the driver's connection layout is not the one expected ({out.strip() or code})"
    return ""


def _layout_check(timeout: float = 60.0) -> tuple[int, str]:
    """(exit code, output) of :data:`_PROBE` in a child, given a ``tdebench-probe-*`` directory that this process
    makes and removes once the child is gone, however either ends (a child killed by a signal removes nothing)."""
    directory = Path(tempfile.gettempdir()) / f"tdebench-probe-{os.getpid()}-{secrets.token_hex(6)}"
    own_path(directory)  # listed before it exists: after a SIGKILL, `tdebench cleanup` removes it
    try:  # made inside the try: a signal right after mkdir still reaches the removal
        directory.mkdir(mode=0o700)
        found = _run_child([sys.executable, "-c", _PROBE, str(directory)], timeout)
        # removed here too: only the first interrupt raises, and it could land in the finally
        shutil.rmtree(directory, ignore_errors=True)
        return found
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run_child(argv: list[str], timeout: float) -> tuple[int, str]:
    """(exit code, output) of ``argv``, run through :func:`run_group`: its process group is killed on a timeout or
    an interrupt and always waited for. It runs in ``/``, so our import path is handed to it made absolute."""
    path = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    done = run_group(argv, None, None, timeout, env={**os.environ, "PYTHONPATH": path}, check=False)
    return done.returncode, done.stdout.decode(errors="replace")


def raw_handle(conn: Any) -> int:
    """The ``sqlite3*`` of a pysqlite connection (no check: see :func:`handle`)."""
    return int(ctypes.c_void_p.from_address(id(conn) + _HANDLE_OFFSET).value or 0)


def handle(conn: Any, path: str) -> int | None:
    """The connection's ``sqlite3*`` when it verifiably belongs to the file ``path``; None otherwise."""
    if usable():
        return None
    raw = raw_handle(conn)
    if not raw:
        return None
    name = _library().sqlite3_db_filename(raw, b"main")
    if not name or os.path.realpath(name.decode()) != os.path.realpath(path):
        return None
    return raw


def status(raw: int) -> tuple[int, int, int]:
    """(cache hits, cache misses, pages written) of one open connection."""
    lib, out = _library(), []
    for op in (CACHE_HIT, CACHE_MISS, CACHE_WRITE):
        cur, high = ctypes.c_int(0), ctypes.c_int(0)
        lib.sqlite3_db_status(raw, op, ctypes.byref(cur), ctypes.byref(high), 0)
        out.append(cur.value)
    return out[0], out[1], out[2]


class PageCounts:
    """Shared (fork-inherited) table of per-connection counts for one database."""

    def __init__(self) -> None:
        self._buffer = mmap.mmap(-1, (SLOTS + 1) * _FIELDS * 8)  # MAP_SHARED | MAP_ANONYMOUS
        self._table = np.frombuffer(self._buffer, dtype=np.int64).reshape(SLOTS + 1, _FIELDS)
        self._lock = multiprocessing.get_context("fork").Lock()
        self._after_fork()
        _ALL.add(self)

    def _after_fork(self) -> None:
        """This process's live connections (a forked child starts with none of its parent's) and their lock."""
        self._local: weakref.WeakSet[Any] = weakref.WeakSet()
        self._thread_lock = threading.RLock()  # a finalizer may close a connection while it is held

    def _mine(self) -> weakref.WeakSet[Any]:
        return self._local

    def adopt(self, conn: "CountingConnection", raw: int) -> None:
        """Give a new connection a slot (folding closed slots into the total when the table is full)."""
        with self._lock:
            free = np.flatnonzero(self._table[:SLOTS, 1] == 0)
            if free.size == 0:
                raise RuntimeError(f"more than {SLOTS} SQLite connections open at once: their page counts "
                                   "cannot be kept")
            slot = int(free[0])
            self._table[slot] = (os.getpid(), 1, 0, 0, 0)
        with self._thread_lock:
            conn._tdb_slot, conn._tdb_raw, conn._tdb_counts, conn._tdb_pid = slot, raw, self, os.getpid()
            self._mine().add(conn)

    def publish(self, conn: "CountingConnection") -> None:
        """Write the connection's counts into its slot (called by its owner)."""
        self._table[conn._tdb_slot, 2:] = status(conn._tdb_raw)

    def release(self, conn: "CountingConnection") -> None:
        """Fold a closing connection's final counts into the total and free its slot."""
        with self._thread_lock:
            final = status(conn._tdb_raw)
            with self._lock:
                self._table[_TOTAL, 2:] += final
                self._table[conn._tdb_slot] = 0
            self._mine().discard(conn)

    def totals(self) -> PageTotals:
        """Counts of every connection ever opened on the database, in any process. A connection is either
        still open (read directly here, or from its slot when another process owns it) or folded into the total,
        never both: closing takes the same locks."""
        pid = os.getpid()
        mine = np.zeros(3, dtype=np.int64)
        with self._thread_lock:
            for conn in list(self._mine()):
                if conn._tdb_raw and conn._tdb_pid == pid:
                    mine += status(conn._tdb_raw)
            with self._lock:
                table = self._table.copy()
        others = table[:SLOTS][(table[:SLOTS, 1] == 1) & (table[:SLOTS, 0] != pid)]
        sums = table[_TOTAL, 2:] + others[:, 2:].sum(axis=0) + mine
        return PageTotals(int(sums[0]), int(sums[1]), int(sums[2]))


_ALL: "weakref.WeakSet[PageCounts]" = weakref.WeakSet()
os.register_at_fork(after_in_child=lambda: [counts._after_fork() for counts in list(_ALL)])


class CountingConnection(sqlcipher3.dbapi2.Connection):
    """A sqlcipher3 connection that reports its page-cache counts to a :class:`PageCounts` table."""

    _tdb_slot = -1
    _tdb_raw = 0
    _tdb_counts: PageCounts | None = None
    _tdb_pid = 0  # the process that opened it: a forked child's copy of the object is not the connection

    def _tdb_publish(self) -> None:
        if self._tdb_raw and self._tdb_counts is not None and self._tdb_pid == os.getpid():
            self._tdb_counts.publish(self)

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        self._tdb_publish()
        if not args and "factory" not in kwargs:
            kwargs["factory"] = CountingCursor
        return super().cursor(*args, **kwargs)

    def _tdb_release(self) -> None:
        counts, self._tdb_counts = self._tdb_counts, None
        if counts is not None and self._tdb_raw and self._tdb_pid == os.getpid():
            counts.release(self)
        self._tdb_raw = 0

    def close(self) -> None:
        self._tdb_release()
        super().close()

    def __del__(self) -> None:  # garbage-collected without close(): the handle is still open here
        try:
            self._tdb_release()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


class CountingCursor(sqlcipher3.dbapi2.Cursor):
    """A cursor that has its connection publish its counts before every statement (a long-lived cursor, such as
    a TPC-C virtual user's, would otherwise publish only once)."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self.connection._tdb_publish()
        return super().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        self.connection._tdb_publish()
        return super().executemany(*args, **kwargs)

    def executescript(self, *args: Any, **kwargs: Any) -> Any:
        self.connection._tdb_publish()
        return super().executescript(*args, **kwargs)


def connect(path: str, counts: PageCounts | None, **kwargs: Any) -> Any:
    """``sqlcipher3.connect`` whose connection reports to ``counts`` when its handle can be read."""
    conn = sqlcipher3.connect(path, factory=CountingConnection, **kwargs)
    if counts is not None:
        raw = handle(conn, path)
        if raw is not None:
            counts.adopt(conn, raw)
    return conn


def process_io() -> tuple[int, int]:
    """(rchar, wchar) of this process and its live children: bytes through read()/write() calls, whatever file
    and whether or not the OS page cache served them."""
    total_r = total_w = 0
    pids = descendants([os.getpid()])
    for pid in pids:
        try:
            with open(f"/proc/{pid}/io") as fh:
                fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
            total_r += int(fields.get("rchar", 0))
            total_w += int(fields.get("wchar", 0))
        except (OSError, ValueError):
            continue
    return total_r, total_w
