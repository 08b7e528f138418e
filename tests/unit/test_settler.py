"""The untimed wait after a write's undo: the server's own wait once, then wakers and a poll that go on as soon as
the work left is none, on a fake server whose wait wakes a purge of 3 ms and then sleeps 100 ms as MariaDB's does."""

from __future__ import annotations

import threading
import time

from tdebench.api.dialect import MARIADB
from tdebench.workloads.sql.settler import Settler


class FakeServer:
    def __init__(self, refuse: bool = False, unreadable: bool = False) -> None:
        self.pending = 0
        self.refuse, self.unreadable = refuse, unreadable
        self.waits = 0
        self.connections: list[FakeConn] = []
        self.lock = threading.Lock()

    def connect(self) -> "FakeConn":
        conn = FakeConn(self)
        self.connections.append(conn)
        return conn

    def wait(self) -> None:
        if self.refuse:
            raise PermissionError("Access denied; you need the SUPER privilege")
        with self.lock:
            self.waits += 1
        while self.pending > 0:  # MariaDB's innodb_max_purge_lag_wait: wake the purge, look again after 100 ms
            threading.Timer(0.003, self.purge).start()
            time.sleep(0.1)

    def purge(self) -> None:
        self.pending = 0


class FakeCursor:
    def __init__(self, server: FakeServer) -> None:
        self.server, self.row = server, None

    def execute(self, sql: str) -> None:
        if sql == MARIADB.settle_sql:
            self.server.wait()
        elif sql == MARIADB.settle_pending_sql:
            if self.server.unreadable:
                raise RuntimeError("no such table")
            self.row = (self.server.pending,)

    def fetchone(self):
        return self.row


class FakeConn:
    def __init__(self, server: FakeServer) -> None:
        self.server, self.closed = server, False

    def cursor(self) -> FakeCursor:
        return FakeCursor(self.server)

    def rollback(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_the_first_wait_is_the_servers_own_and_the_next_ones_end_when_the_purge_is_done():
    server = FakeServer()
    conn = server.connect()
    settler = Settler(server.connect, MARIADB)
    server.pending = 5
    assert settler.settle(conn) and server.waits == 1 and len(server.connections) == 1  # on the measuring connection
    spent = []
    for _ in range(10):
        server.pending = 5  # an undo left work behind
        started = time.perf_counter()
        assert settler.settle(conn)
        spent.append(time.perf_counter() - started)
        assert server.pending == 0
    spent.sort()
    assert spent[len(spent) // 2] < 0.02  # not the server's 100-ms sleep
    assert spent[-1] < 0.15  # at worst a waker's own next look, never the 2-s limit
    assert 2 <= len(settler.wakers) <= Settler.WAKERS  # wakers asleep in the server take turns
    settler.close()
    assert all(c.closed for c in server.connections[1:]) and not settler.wakers
    assert not any(w.is_alive() for w in threading.enumerate() if w.name == "tdebench-settle")


def test_a_server_that_refuses_the_wait_is_not_asked_again_and_no_waker_starts():
    server = FakeServer(refuse=True)
    conn = server.connect()
    settler = Settler(server.connect, MARIADB)
    assert not settler.settle(conn)
    assert not settler.settle(conn)
    assert len(server.connections) == 1 and not settler.wakers


def test_an_unreadable_count_falls_back_to_the_servers_wait():
    server = FakeServer(unreadable=True)
    conn = server.connect()
    settler = Settler(server.connect, MARIADB)
    assert settler.settle(conn) and server.waits == 1
    server.pending = 3
    assert settler.settle(conn)
    assert server.pending == 0 and server.waits >= 2
    settler.close()


def test_a_dialect_without_a_wait_is_never_asked():
    from tdebench.api.dialect import POSTGRES
    server = FakeServer()
    settler = Settler(server.connect, POSTGRES)
    assert not settler.settle(server.connect())
    assert len(server.connections) == 1
