"""Disk-full watchdog of a private MariaDB server: turn MariaDB's endless wait for disk space into an error.

InnoDB and internal temporary tables fail at once on a full disk ("The table 'x' is full", "Disk got full
writing"), but writes that go through mysys with ``MY_WAIT_IF_FULL`` (binary log, MyISAM and Aria tables, also
during binlog recovery at start-up) do not: the thread logs ``Disk is full writing './binlog.000001' (Errcode: 28
"No space left on device"). Waiting for someone to free space...`` once, shows the state ``Waiting for someone to
free space`` in the process list and retries every 60 s for ever. MariaDB 10.11 has no option to turn this off;
``KILL`` ends such a statement at once.

While its server runs, a watchdog thread looks every :data:`INTERVAL` seconds at the new lines of the server's
error log and, when the instance's filesystem has less than :data:`LOW_SPACE` left, at the process list: the log
line is lost when the log itself sits on the full filesystem. When something waits for space it KILLs the waiting
connections (and any that start waiting later) and keeps the reason, an ``OSError(ENOSPC)``, for
``Instance.problem()``. :func:`full_disk_reason` explains, from the same log, failures on a full disk whose own
error does not say so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

INTERVAL = 0.5
LOW_SPACE = 16 * 1024 * 1024  # below this the process list is asked too (a waiting write leaves ~0 bytes)
FULL_SPACE = 1024 * 1024  # below this a failure the log does not explain is put down to the full disk
WAIT_STATE = "Waiting for someone to free space"
# EE_DISK_FULL (mysys) and ER_DISK_FULL ("Disk full (%s); waiting for someone to free some space...")
WAIT_LINE = re.compile(r"waiting for someone to free (?:some )?space", re.I)
# how MariaDB logs a write that failed on a full disk (InnoDB, mysys)
FULL_LINE = re.compile(r"the table '[^']*' is full|failed with error 28\b|(?:errcode|errno): 28\b", re.I)
_LOG_PREFIX = re.compile(r"^\S+\s+\S+\s+\d+\s+\[\w+\]\s+(?:\S*(?:mariadbd|mysqld):\s+)?")
_READ_MAX = 1024 * 1024


class DiskFullWatchdog:
    """Watches one running server; :attr:`problem` is set once a statement (or the server) waits for space."""

    def __init__(self, name: str, log_path: Path, fs_path: Path, connect: Callable[[], Any]) -> None:
        self.name = name
        self.log_path = log_path
        self.fs_path = fs_path
        self._connect = connect
        self.problem: OSError | None = None
        self._offset = _size(log_path)  # lines of earlier starts are not this server's
        self._conn: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"disk-full watchdog {self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread (idempotent); :attr:`problem` stays."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)  # a hung server's process list: the daemon thread is left
        self._thread = None
        self._close()

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a watchdog hiccup must never cost a run; next round tries again
                self._close()

    def check(self) -> OSError | None:
        """One look: new log lines, then (space low or a wait seen) the process list; KILLs waiting statements."""
        line = self._wait_line()
        if line is not None and self.problem is None:
            self.problem = _error(self.name, line)
        if line is not None or self.problem is not None or free_space(self.fs_path) < LOW_SPACE:
            for thread_id, info in self._waiting():
                if self.problem is None:
                    self.problem = _error(self.name, f"a statement waits for disk space ({info[:120]})")
                self._kill(thread_id)
        return self.problem

    def _wait_line(self) -> str | None:
        """The first line of MariaDB's wait-for-space message among those logged since the last look."""
        size = _size(self.log_path)
        if size < self._offset:  # truncated or replaced: read it again from the start
            self._offset = 0
        if size == self._offset:
            return None
        with open(self.log_path, "rb") as handle:
            handle.seek(self._offset)
            chunk = handle.read(_READ_MAX)
        end = chunk.rfind(b"\n") + 1  # whole lines only; a line longer than a read is taken as it is
        end = end or (len(chunk) if len(chunk) == _READ_MAX else 0)
        self._offset += end
        for raw in chunk[:end].decode(errors="replace").splitlines():
            if WAIT_LINE.search(raw):
                return raw
        return None

    def _waiting(self) -> list[tuple[int, str]]:
        """(id, statement) of every connection in the wait-for-space state."""
        if self._conn is None:
            self._conn = self._connect()
        cur = self._conn.cursor()
        cur.execute("SHOW FULL PROCESSLIST")
        return [(int(row[0]), str(row[7] or row[4])) for row in cur.fetchall()
                if str(row[6] or "").startswith(WAIT_STATE)]

    def _kill(self, thread_id: int) -> None:
        with contextlib.suppress(Exception):  # already gone, or a system thread
            self._conn.cursor().execute(f"KILL {thread_id}")

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()


def full_disk_reason(log_path: Path, fs_path: Path, since: int) -> str | None:
    """Why a failure looks like a full disk: the last line the server logged after byte ``since`` about a write
    that failed or waits for space, else "its filesystem is full" when (almost) no byte is left; else None.

    For failures whose own error says nothing: a LOAD DATA LOCAL that fails mid-file ("The table 'orders' is
    full") loses its connection, as the client is still sending; a server that cannot start shows a timeout.
    """
    try:
        with open(log_path, "rb") as handle:
            handle.seek(max(since, _size(log_path) - _READ_MAX))
            lines = handle.read().decode(errors="replace").splitlines()
    except OSError:
        lines = []
    full = [line for line in lines if FULL_LINE.search(line) or WAIT_LINE.search(line)]
    if full:
        return _error_text(full[-1])
    return "its filesystem is full" if free_space(fs_path) < FULL_SPACE else None


def _error(name: str, text: str) -> OSError:
    """The ENOSPC error the runner reports for a server that waits for space."""
    return OSError(errno.ENOSPC, f"{name} waits for free disk space instead of failing: {_error_text(text)}")


def _error_text(line: str) -> str:
    """A log line without its prefix and MariaDB's promise to wait."""
    text = _LOG_PREFIX.sub("", line.strip())
    return re.split(r"\.?\s*Waiting for someone", text, maxsplit=1, flags=re.I)[0]


def log_size(path: Path) -> int:
    """Bytes in the log now (0 when missing): where lines of what comes next start."""
    return _size(path)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def free_space(path: Path) -> int:
    """Bytes an unprivileged writer (the server) may still use on ``path``'s filesystem."""
    try:
        st = os.statvfs(path)
    except OSError:
        return LOW_SPACE  # gone (stopping): nothing to ask about
    return st.f_bavail * st.f_frsize
