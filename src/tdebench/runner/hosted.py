"""An embedded engine's statements in processes of their own (``--schedule duet``).

An embedded engine (SQLite) runs inside whichever process opens the connection. Two twins run side by side by
tdebench's client threads would share one process and its interpreter lock, and could not be put into a CPU set
each. :class:`HostedInstance` stands in for such an instance during a duet block: a connection opened in tdebench's
process is served by a forked *host* process that opens the real connection and runs every statement, so each
twin's engine work runs in processes of its own (placed in the twin's cgroup by ``place``). Connections opened in
other processes (forked clients such as TPC-C's virtual users, which are processes of their own already) are the
real instance's. A host stays up until the block ends and serves the next connection once its connection is closed,
so the engine's counters stay cumulative; they are read in the host that ran the last statement, where the
connection's own counts are current. A statement is cancelled (query timeouts) by a thread of the host.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tdebench.api.engine import Connection, Instance

#: seconds a host may take to leave when told
HOST_TIMEOUT = 10.0
#: held while a host's pipes are made and its process forked: a process forked by another thread in between (the
#: other twin's host) would inherit this host's ends of them, and this host's exit would then go unseen
SPAWN = threading.Lock()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RuntimeError carrying its type and text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any exception type a driver raises
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class _Served:
    """The host's side: one real connection at a time and its cursors."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.conn: Any = None
        self.cursors: dict[int, Any] = {}

    def handle(self, op: str, args: tuple[Any, ...]) -> Any:
        if op == "open":
            self.conn = self.instance.connect()
            return None
        if op == "counters":
            return self.instance.counters()
        if op in ("commit", "rollback"):
            return getattr(self.conn, op)()
        if op == "close":
            conn, self.conn, self.cursors = self.conn, None, {}
            return conn.close() if conn is not None else None
        if op == "in_transaction":
            return getattr(self.conn, "in_transaction", True)
        cid, rest = args[0], args[1:]
        if op in ("execute", "executemany"):
            cur = self.cursors.get(cid) or self.cursors.setdefault(cid, self.conn.cursor())
            getattr(cur, op)(*rest)
            return cur.description, cur.rowcount
        cur = self.cursors[cid]
        if op == "close_cursor":
            self.cursors.pop(cid, None)
            return cur.close()
        return [tuple(r) for r in getattr(cur, op)(*rest)] if op != "fetchone" else (
            None if (row := cur.fetchone()) is None else tuple(row))

    def interrupt(self) -> None:
        conn = self.conn
        if conn is not None and hasattr(conn, "interrupt"):
            conn.interrupt()


def _serve(instance: Instance, chan: Any, irq: Any, theirs: list[Any], parent: int) -> None:
    """The host process: run requests until told to exit or until tdebench (``parent``) is gone. ``theirs``: the
    pipe ends that are tdebench's, closed here so that tdebench's death closes the pipes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is tdebench's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for end in theirs:
        end.close()
    served = _Served(instance)

    def interrupts() -> None:
        try:
            while irq.recv() is not None:
                served.interrupt()
        except (EOFError, OSError):
            pass

    threading.Thread(target=interrupts, daemon=True).start()
    while True:
        try:
            if not chan.poll(1.0):
                if os.getppid() != parent:  # a killed tdebench: another process may hold the pipe open
                    break
                continue
            op, args = chan.recv()
        except (EOFError, OSError):
            break
        if op == "exit":
            break
        try:
            chan.send(("ok", served.handle(op, args)))
        except Exception as exc:  # noqa: BLE001 - every driver error goes back to the caller
            chan.send(("error", _portable(exc)))
    served.handle("close", ())
    os._exit(0)


class _Host:
    """tdebench's side of one host process."""

    def __init__(self, instance: Instance, place: Callable[[int], None]) -> None:
        ctx = multiprocessing.get_context("fork")
        with SPAWN:
            self.chan, child = ctx.Pipe(duplex=True)
            reader, self.irq = ctx.Pipe(duplex=False)  # cancellations: the host reads, tdebench writes
            self.proc = ctx.Process(target=_serve, args=(instance, child, reader, [self.chan, self.irq],
                                                         os.getpid()),
                                    daemon=True, name=f"tdebench-host-{instance.config.label}")
            self.proc.start()
            child.close()
            reader.close()
        place(int(self.proc.pid or 0))
        self.lock = threading.Lock()
        self.busy = False  # a connection is open on it

    @property
    def pid(self) -> int:
        return int(self.proc.pid or 0)

    def call(self, op: str, *args: Any) -> Any:
        with self.lock:
            self.chan.send((op, args))
            kind, value = self.chan.recv()
        if kind == "error":
            raise value
        return value

    def stop(self, wait: bool = True) -> None:
        """Tell the host to leave and wait for it (``wait`` False: an interrupted run, kill it at once)."""
        try:
            self.chan.send(("exit", ()))
        except OSError:
            pass
        self.proc.join(timeout=HOST_TIMEOUT if wait else 0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=5)
        for end in (self.chan, self.irq):
            end.close()


class HostedCursor:
    """A DB-API cursor whose statements run in the host."""

    _ids = iter(range(1, 1 << 62))

    def __init__(self, host: _Host) -> None:
        self.host, self.id = host, next(self._ids)
        self.description: Any = None
        self.rowcount = -1
        self.arraysize = 1

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> "HostedCursor":
        self.description, self.rowcount = self.host.call("execute", self.id, sql, params)
        return self

    def executemany(self, sql: str, rows: Any) -> "HostedCursor":
        self.description, self.rowcount = self.host.call("executemany", self.id, sql, list(rows))
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.host.call("fetchall", self.id)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        return self.host.call("fetchmany", self.id, size or self.arraysize)

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.host.call("fetchone", self.id)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())

    def close(self) -> None:
        try:
            self.host.call("close_cursor", self.id)
        except (KeyError, EOFError, OSError):
            pass


class HostedConnection:
    """A DB-API connection served by a host process (see the module docstring)."""

    def __init__(self, host: _Host, release: Callable[[_Host], None]) -> None:
        self.host = host
        self._release: Callable[[_Host], None] | None = release
        host.call("open")

    def cursor(self) -> HostedCursor:
        return HostedCursor(self.host)

    def commit(self) -> None:
        self.host.call("commit")

    def rollback(self) -> None:
        self.host.call("rollback")

    @property
    def in_transaction(self) -> bool:
        return bool(self.host.call("in_transaction"))

    def interrupt(self) -> None:
        """Cancel the running statement (called from another thread, e.g. a query timeout's timer)."""
        try:
            self.host.irq.send(1)
        except OSError:
            pass

    def close(self) -> None:
        release, self._release = self._release, None
        if release is None:
            return
        try:
            self.host.call("close")
        except (EOFError, OSError):
            pass
        finally:
            release(self.host)


class HostedInstance:
    """Stands in for an embedded :class:`Instance` during a duet block: connections opened in this process are
    served by host processes (placed with ``place``); everything else is the real instance's. ``pids`` lists the
    processes doing the twin's engine work (its hosts, and clients that open connections of their own, e.g. TPC-C's
    virtual users); None: the hosts."""

    def __init__(self, real: Instance, place: Callable[[int], None],
                 pids: Callable[[], list[int]] | None = None) -> None:
        self._real = real
        self._place = place
        self._pids = pids
        self._owner = os.getpid()
        self._hosts: list[_Host] = []
        self._last: _Host | None = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @property
    def real(self) -> Instance:
        return self._real

    def connect(self) -> Connection:
        if os.getpid() != self._owner:  # a forked client: a process of its own already
            return self._real.connect()
        with self._lock:
            host = next((h for h in self._hosts if not h.busy), None)
            if host is None:
                host = _Host(self._real, self._place)
                self._hosts.append(host)
            host.busy = True
        self._last = host
        try:
            return HostedConnection(host, self._free)
        except BaseException:
            self._free(host)
            raise

    def _free(self, host: _Host) -> None:
        with self._lock:
            host.busy = False

    def server_pids(self) -> list[int]:
        """The processes that run the twin's engine work (see the class docstring)."""
        if os.getpid() != self._owner:
            return self._real.server_pids()
        if self._pids is not None:
            return self._pids()
        return [h.pid for h in self._hosts if h.proc.is_alive()]

    def counters(self) -> dict[str, float]:
        """Read in the host of the last connection opened (where its counts are current), else here."""
        host = self._last
        if host is not None and os.getpid() == self._owner and host.proc.is_alive() and host.busy:
            return host.call("counters")
        return self._real.counters()

    def close(self, wait: bool = True) -> None:
        """Stop every host (their connections close with them); ``wait`` False: kill them at once."""
        with self._lock:
            hosts, self._hosts, self._last = self._hosts, [], None
        for host in hosts:
            host.stop(wait)
