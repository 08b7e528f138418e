"""An embedded engine's statements in host processes (``--schedule duet``), on a real SQLite file: rows, errors,
cancellation, counters read where the statements ran, hosts reused and stopped."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psutil
import pytest

from tdebench.api.engine import Config
from tdebench.encryption import parse_spec
from tdebench.engines import get_engine
from tdebench.runner.hosted import HostedInstance


@pytest.fixture
def instance(tmp_path: Path):
    engine = get_engine("sqlite")
    inst = engine.create_instance(Config("sqlite", parse_spec("none"), engine.default_settings()), tmp_path, "t")
    inst.start()
    conn = inst.connect()
    cur = conn.cursor()
    cur.execute("BEGIN")  # one transaction (the connection autocommits)
    cur.execute("CREATE TABLE a (x INTEGER, y TEXT)")
    cur.executemany("INSERT INTO a VALUES (?, ?)", [(i, str(i)) for i in range(20000)])
    cur.execute("COMMIT")
    conn.close()
    yield inst
    inst.destroy()


def test_statements_run_in_a_host_process_of_their_own(instance):
    placed: list[int] = []
    hosted = HostedInstance(instance, placed.append)
    try:
        conn = hosted.connect()
        cur = conn.cursor()
        cur.execute("SELECT COUNT(*), SUM(x) FROM a WHERE x % ? = 0", (2,))
        assert cur.fetchall() == [(10000, 99990000)] and cur.description[0][0] == "COUNT(*)"
        assert placed and placed == hosted.server_pids() and os.getpid() not in placed
        assert psutil.Process(placed[0]).ppid() == os.getpid()
        counters = hosted.counters()  # read in the host, where the connection's counts are current
        assert counters["cache_requests"] > 0
        with pytest.raises(Exception, match="no such column"):
            cur.execute("SELECT nope FROM a")
        timer = threading.Timer(0.3, conn.interrupt)
        timer.start()
        with pytest.raises(Exception, match="interrupted"):
            cur.execute("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT COUNT(*) FROM r")
        conn.rollback()
        cur.execute("UPDATE a SET y = 'z' WHERE x < 10")
        assert cur.rowcount == 10
        conn.commit()
        conn.close()
        again = hosted.connect()  # the idle host serves the next connection
        assert hosted.server_pids() == placed
        again.cursor().execute("SELECT 1")
        again.close()
    finally:
        hosted.close()
    assert not psutil.pid_exists(placed[0]) or psutil.Process(placed[0]).status() == psutil.STATUS_ZOMBIE
    check = instance.connect()
    assert check.cursor().execute("SELECT COUNT(*) FROM a WHERE y = 'z'").fetchone() == (10,)  # committed
    check.close()


def test_a_forked_client_connects_directly(instance):
    hosted = HostedInstance(instance, lambda pid: None)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a client process of its own (e.g. a TPC-C virtual user): the real connection
        conn = hosted.connect()
        os.write(write, type(conn).__name__.encode())
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 100).decode() != "HostedConnection"
    assert hosted.server_pids() == []  # no host was started for it
    hosted.close()
