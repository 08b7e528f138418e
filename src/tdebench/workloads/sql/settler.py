"""Waiting, untimed, until the work a write's undo left behind is done, so that it does not land in the next timed
write.

MariaDB's own wait (``SET GLOBAL innodb_max_purge_lag_wait = 0``) wakes the purge and then sleeps 100 ms before it
looks again, although the purge of one undo takes a few milliseconds; run after every execution, it left a visit of
a 7-ms write timed for about 7% of its wall time (``benchmarks/write_settle.py``: 37% with this wait). So the wait
runs on a connection of its own, in a thread (a *waker*: it wakes the purge at once and sleeps in the server, holding
no CPU), while the measuring connection reads the work left (``Dialect.settle_pending_sql``) every millisecond and
goes on as soon as it is none. A waker still asleep from an earlier wake cannot wake the purge again, so up to
``WAKERS`` of them take turns.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.workloads.sql.steps import rollback


class _Waker:
    """A thread with a connection of its own that runs the server's wait when asked."""

    def __init__(self, conn: Connection, sql: str, idle: "queue.Queue[_Waker]") -> None:
        self.conn, self.sql, self.idle = conn, sql, idle
        self.asks: queue.Queue[bool] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="tdebench-settle", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        try:
            while self.asks.get():
                self.conn.cursor().execute(self.sql)
                self.idle.put(self)
        except Exception:  # noqa: BLE001 - a waker that fails is not put back; the poll still ends by its limit
            pass
        finally:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001
                pass

    def stop(self) -> None:
        self.asks.put(False)


class Settler:
    """The untimed wait after a write's undo, for one config's measuring connection."""

    WAKERS = 8
    #: how often the work left is read, and how long before the server's own wait is used instead
    POLL = 0.001
    LIMIT = 2.0

    def __init__(self, connect: Callable[[], Connection], dialect: Dialect) -> None:
        self.connect, self.dialect = connect, dialect
        self.enabled = dialect.settle_sql is not None
        self.checked = False
        self.idle: queue.Queue[_Waker] = queue.Queue()
        self.wakers: list[_Waker] = []

    def settle(self, conn: Connection) -> bool:
        """Wait until the work left behind is done; False where the server refuses the wait (the caller's writes
        are then measured without it)."""
        if not self.enabled:
            return False
        if not self.checked or self.dialect.settle_pending_sql is None:
            # the first wait is the server's own, on this connection: it proves the privilege before any waker
            self.checked = True
            self.enabled = self._server_wait(conn)
            return self.enabled
        self._wake()
        started = time.perf_counter()
        while time.perf_counter() - started < self.LIMIT:
            pending = self._pending(conn)
            if pending is None:
                break
            if pending == 0:
                return True
            time.sleep(self.POLL)
        return self._server_wait(conn)

    def _server_wait(self, conn: Connection) -> bool:
        assert self.dialect.settle_sql is not None
        try:
            conn.cursor().execute(self.dialect.settle_sql)
        except Exception:  # noqa: BLE001 - a wait the server does not offer; the writes are measured without it
            rollback(conn, self.dialect)
            return False
        return True

    def _pending(self, conn: Connection) -> int | None:
        assert self.dialect.settle_pending_sql is not None
        try:
            cur = conn.cursor()
            cur.execute(self.dialect.settle_pending_sql)
            row = cur.fetchone()
        except Exception:  # noqa: BLE001 - unreadable: the server's own wait decides
            rollback(conn, self.dialect)
            return None
        return int(row[0]) if row and row[0] is not None else None

    def _wake(self) -> None:
        """Ask an idle waker to run the server's wait (a new one while there are fewer than ``WAKERS``)."""
        try:
            waker = self.idle.get_nowait()
        except queue.Empty:
            if len(self.wakers) >= self.WAKERS:
                return  # every waker is asleep in the server and wakes the purge again when it looks
            try:
                waker = _Waker(self.connect(), self.dialect.settle_sql or "", self.idle)
            except Exception:  # noqa: BLE001 - no connection to spare: the poll and the limit still hold
                return
            self.wakers.append(waker)
        waker.asks.put(True)

    def close(self) -> None:
        """Stop every waker (each finishes its wait, at most one server check, then closes its connection)."""
        for waker in self.wakers:
            waker.stop()
        for waker in self.wakers:
            waker.thread.join(timeout=1.0)
        self.wakers.clear()
