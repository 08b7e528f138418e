"""Engine counters and cache sizing on real instances (SQLite/SQLCipher, MariaDB, PostgreSQL): what each engine says
crossed the encryption boundary, its cache's hit ratio, and that its ``cache().resize`` really sizes the cache."""

from __future__ import annotations

import multiprocessing
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tdebench.api.counters import COUNTERS
from tdebench.encryption import parse_spec
from tdebench.engines import Config, get_engine
from tdebench.engines.toolkit import memcap

MIB = 1024 * 1024
ROWS = 60_000  # ~17 MB of rows: several times the smallest caches below


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before.get(k, 0) for k in after if k != "page_size"}


def _instance(engine: str, spec: str, workdir: Path, settings: dict[str, str] | None = None):
    workdir.mkdir(parents=True, exist_ok=True)
    workdir.chmod(0o711)
    return get_engine(engine).create_instance(Config(engine, parse_spec(spec), settings or {}), workdir)


def _started(tmp_path_factory, engine: str, specs: tuple[str, ...], fill: Callable[[Any], None],
             settings: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """For a module fixture: a started instance of ``engine`` per spec, each filled by ``fill``; all destroyed
    at the end."""
    out: dict[str, Any] = {}
    try:
        for spec in specs:
            inst = _instance(engine, spec, tmp_path_factory.mktemp(engine), settings)
            out[spec] = inst
            inst.start()
            fill(inst)
        yield out
    finally:
        for inst in out.values():
            inst.destroy()


def _scan(inst, sql: str = "SELECT sum(length(b)) FROM t") -> None:
    conn = inst.connect()
    try:
        cur = conn.cursor()
        cur.execute(sql)
        cur.fetchall()
        conn.commit()
    finally:
        conn.close()


def _warm_scan(inst, cache_bytes: int) -> dict[str, float]:
    """The counters of a scan of t once the cache holds ``cache_bytes`` and a first scan has filled it."""
    inst.cache().resize(cache_bytes)
    _scan(inst)
    before = inst.counters()
    _scan(inst)
    return _delta(inst.counters(), before)


def _fill(inst, insert: str) -> None:
    conn = inst.connect()
    try:
        inst.create_schema(conn, ["CREATE TABLE t (a INTEGER PRIMARY KEY, b VARCHAR(300) NOT NULL)"], [])
        cur = conn.cursor()
        cur.execute(insert)
        conn.commit()
    finally:
        conn.close()


def test_every_counter_an_engine_reports_is_in_the_vocabulary() -> None:
    for name in ("cache_requests", "cache_misses", "bytes_decrypted", "bytes_encrypted", "values_read_encrypted",
                 "bytes_decrypted_estimate", "page_size", "log_bytes", "temp_bytes"):
        assert name in COUNTERS or name.endswith("_estimate")


# SQLite / SQLCipher ---------------------------------------------------------------------------------------------
def _fill_sqlite(inst) -> None:
    conn = inst.connect()
    try:
        conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT NOT NULL)")
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 250) for i in range(ROWS)])
        conn.execute("COMMIT")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def sqlite_pair(tmp_path_factory):
    yield from _started(tmp_path_factory, "sqlite", ("none", "sqlcipher:aes-256-cbc"), _fill_sqlite)


def _in_child(inst) -> None:
    _scan(inst)


def _long_lived_cursor(inst, done, go_on) -> None:
    """A TPC-C virtual user's way: one connection and one cursor for everything, kept open."""
    conn = inst.connect()
    cur = conn.cursor()
    cur.execute("SELECT sum(length(b)) FROM t")
    cur.fetchall()
    cur.execute("SELECT 1")  # the next statement publishes the scan's counts
    cur.fetchall()
    done.set()
    go_on.wait(60)
    conn.close()


def test_sqlite_counts_pages_its_cache_missed_and_sqlcipher_decrypted_them(sqlite_pair) -> None:
    for spec, inst in sqlite_pair.items():
        applied = inst.cache().resize(256 * 1024)
        assert applied["cache_size"] == "-256"
        conn = inst.connect()
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == -256
        conn.close()
        before = inst.counters()
        _scan(inst)
        d = _delta(inst.counters(), before)
        pages = inst.path.stat().st_size // 4096
        assert d["cache_misses"] >= 0.9 * pages and d["cache_requests"] >= d["cache_misses"], (spec, d)
        if spec == "none":
            assert d["bytes_decrypted"] == 0 and d["bytes_encrypted"] == 0
        else:
            assert d["bytes_decrypted"] == d["cache_misses"] * 4096
        assert d["bytes_read"] >= 0.9 * d["cache_misses"] * 4096  # the process really read those pages
        inst.cache().resize(64 * MIB)
        conn = inst.connect()
        for _ in range(2):
            before = inst.counters()
            conn.execute("SELECT sum(length(b)) FROM t").fetchall()
            d = _delta(inst.counters(), before)
        conn.close()
        assert d["cache_misses"] == 0 and d["cache_requests"] >= pages, (spec, d)


def test_sqlite_counts_connections_in_forked_processes_and_threads(sqlite_pair) -> None:
    inst = sqlite_pair["sqlcipher:aes-256-cbc"]
    inst.cache().resize(256 * 1024)
    before = inst.counters()
    child = multiprocessing.get_context("fork").Process(target=_in_child, args=(inst,))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    d = _delta(inst.counters(), before)
    assert d["bytes_decrypted"] >= 0.9 * inst.path.stat().st_size


# MariaDB --------------------------------------------------------------------------------------------------------
mariadb = pytest.mark.skipif(not (Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd")),
                             reason="mariadbd is not installed")
SMALL = {"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "32M", "innodb_log_buffer_size": "4M"}


def _fill_mariadb(inst) -> None:
    conn = inst.connect()
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b VARCHAR(300) NOT NULL)")
        for k in range(6):
            cur.executemany("INSERT INTO t VALUES (%s, %s)", [(k * 10_000 + i, "x" * 250) for i in range(10_000)])
        conn.commit()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def mariadb_pair(tmp_path_factory):
    yield from _started(tmp_path_factory, "mariadb", ("none", "tde:aes-256-ctr"), _fill_mariadb, SMALL)


@pytest.mark.server
@mariadb
def test_mariadb_counts_pages_read_into_the_buffer_pool_and_decrypted(mariadb_pair) -> None:
    for spec, inst in mariadb_pair.items():
        applied = inst.cache().resize(8 * MIB)
        assert applied["innodb_buffer_pool_size"] == 8 * MIB and "O_DIRECT" in applied["os_page_cache"]
        before = inst.counters()
        assert before["page_size"] == 16384
        _scan(inst)
        d = _delta(inst.counters(), before)
        assert d["pages_read"] > 500 and d["cache_misses"] > 500, (spec, d)  # ~17 MB through an 8 MiB pool
        # a scan that does not fit: nearly every page is read ahead, and read-ahead counts among the misses, so the
        # hit ratio says what happened: the pages came from storage (docs/memory.md)
        assert d["cache_misses"] >= d["pages_read_ahead"] > 0.5 * d["pages_read"], (spec, d)
        assert d["cache_misses"] >= 0.95 * d["cache_requests"], (spec, d)
        if spec == "none":
            assert d["bytes_decrypted"] == 0
        else:  # every page read from a data file is decrypted
            assert d["bytes_decrypted"] >= 0.95 * d["pages_read"] * 16384, d
        d = _warm_scan(inst, 256 * MIB)
        assert d["cache_misses"] == 0 and d["bytes_decrypted"] == 0 and d["cache_requests"] > 500, (spec, d)


def _storage_read_bytes(pids: list[int]) -> int:
    """Bytes the processes had the block layer read for them (``/proc/PID/io`` ``read_bytes``)."""
    return sum(psutil.Process(pid).io_counters().read_bytes for pid in pids)


@pytest.mark.server
@mariadb
def test_mariadb_with_page_source_memory_reads_its_pool_misses_from_the_os_page_cache(mariadb_pair) -> None:
    for spec, inst in mariadb_pair.items():
        applied = inst.cache().resize(8 * MIB, "memory")
        assert applied["innodb_flush_method"] == "fsync" and "holds the data" in applied["os_page_cache"]
        assert applied["page_cache_refilled_bytes"] > 0
        assert inst.cache().os_cache_files() == (inst.root, inst.datadir)  # the restarts fill it again
        before, disk_before = inst.counters(), _storage_read_bytes(inst.server_pids())
        _scan(inst)
        d = _delta(inst.counters(), before)
        from_disk = _storage_read_bytes(inst.server_pids()) - disk_before
        assert d["pages_read"] > 500, (spec, d)  # the pool still misses, and decrypts what it reads
        assert from_disk < 0.1 * d["pages_read"] * 16384, (spec, from_disk, d)  # ... from memory
        if spec != "none":
            assert d["bytes_decrypted"] >= 0.95 * d["pages_read"] * 16384, d
        inst.options["innodb_flush_method"] = "O_DIRECT"  # back to the disk for the module's other tests
        assert "O_DIRECT" in inst.cache().resize(256 * MIB, "disk")["os_page_cache"]
        assert inst.cache().os_cache_files() is None


@pytest.mark.server
@mariadb
def test_mariadb_counts_the_redo_log_it_encrypts(mariadb_pair) -> None:
    for spec, inst in mariadb_pair.items():
        before = inst.counters()
        conn = inst.connect()
        conn.cursor().execute("UPDATE t SET b = CONCAT('y', SUBSTRING(b, 2)) WHERE a < 20000")
        conn.commit()
        conn.close()
        d = _delta(inst.counters(), before)
        assert d["log_bytes"] > 1_000_000, d
        if spec == "none":
            assert d["bytes_encrypted"] == 0
        else:
            assert d["bytes_encrypted"] >= d["log_bytes"]


# PostgreSQL -----------------------------------------------------------------------------------------------------
postgres = pytest.mark.skipif(not Path("/usr/lib/postgresql").is_dir(), reason="PostgreSQL is not installed")


@pytest.fixture(scope="module")
def pg_instances(tmp_path_factory):
    insert = f"INSERT INTO t SELECT g, repeat('x', 250) FROM generate_series(1, {ROWS}) g"
    yield from _started(tmp_path_factory, "postgres", ("none", "column:aes-128", "fs:gocryptfs"),
                        lambda inst: _fill(inst, insert), {"shared_buffers": "32MB"})


@pytest.mark.server
@postgres
def test_postgres_counts_shared_buffer_hits_and_misses_per_statement(pg_instances) -> None:
    inst = pg_instances["none"]
    assert inst.settings()["shared_preload_libraries"] == "pg_stat_statements"
    applied = inst.cache().resize(8 * MIB)
    assert applied["shared_buffers"] == "8192kB"
    before = inst.counters()
    _scan(inst)
    d = _delta(inst.counters(), before)  # no wait: pg_stat_statements adds a statement's blocks when it ends
    assert d["cache_misses"] > 1000 and d["cache_requests"] >= d["cache_misses"], d
    # bytes_read is the rchar of the server's processes: the closed backend's bytes reach the postmaster when
    # it is reaped, a moment after the connection closed
    deadline = time.monotonic() + 10
    while d["bytes_read"] < 0.9 * d["cache_misses"] * 8192 and time.monotonic() < deadline:
        time.sleep(0.1)
        d = _delta(inst.counters(), before)
    assert d["bytes_read"] >= 0.9 * d["cache_misses"] * 8192, d
    d = _warm_scan(inst, 128 * MIB)
    assert d["cache_misses"] == 0 and d["cache_requests"] > 1000, d


@pytest.mark.server
@postgres
def test_postgres_with_page_source_memory_reads_what_shared_buffers_miss_from_the_os_page_cache(pg_instances) -> None:
    inst = pg_instances["none"]
    applied = inst.cache().resize(8 * MIB, "memory")
    assert "holds the data" in applied["os_page_cache"] and "memory_limit_bytes" not in applied
    before = inst.counters()
    _scan(inst)
    d = _delta(inst.counters(), before)
    assert d["cache_misses"] > 1000, d
    inst.cache().resize(8 * MIB, "disk")  # bounded again for the module's other tests


def _alive(pid: int) -> bool:
    """Running, not exited (an exited child leaves its cgroup before its parent reaps it)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.server
@postgres
@pytest.mark.skipif(bool(memcap.unavailable()), reason="no memory cgroup here")
def test_postgres_in_a_memory_cgroup_cannot_keep_its_data_in_the_os_cache(pg_instances) -> None:
    inst = pg_instances["none"]
    applied = inst.cache().resize(8 * MIB)
    assert applied["memory_limit_bytes"] == 8 * MIB + applied["memory_headroom_bytes"]
    outside = set(inst.pgcluster.pids()) - set(inst._cap.members())
    # a backend of an earlier connection may still be exiting when listed: only live processes count
    assert not {pid for pid in outside if _alive(pid)}, outside
    _scan(inst)
    conn = inst.connect()  # a backend started after the move is in the group too
    try:  # asked while the backend lives: it exits when its connection closes
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert pid in inst._cap.members() or not inst.pgcluster.running()
    finally:
        conn.close()
    cached = inst._cap.page_cache_bytes()
    assert cached is not None and cached <= inst._cap.limit


@pytest.mark.server
@postgres
def test_postgres_estimates_what_gocryptfs_and_pgcrypto_decrypted(pg_instances) -> None:
    fs = pg_instances["fs:gocryptfs"]
    fs.cache().resize(8 * MIB)
    before = fs.counters()
    _scan(fs)
    d = _delta(fs.counters(), before)
    assert d["bytes_decrypted_estimate"] >= 0.5 * d["cache_misses"] * 8192 > 0, d
    column = pg_instances["column:aes-128"]
    before = column.counters()
    _scan(column)
    time.sleep(1.5)  # table statistics are published up to a second late
    d = _delta(column.counters(), before)
    assert d["values_read_encrypted"] >= ROWS, d  # one encrypted column (b) read in every row


def test_sqlite_counts_a_long_lived_cursor_of_another_process_while_it_is_open(sqlite_pair) -> None:
    inst = sqlite_pair["sqlcipher:aes-256-cbc"]
    inst.cache().resize(256 * 1024)
    ctx = multiprocessing.get_context("fork")
    done, go_on = ctx.Event(), ctx.Event()
    before = inst.counters()
    child = ctx.Process(target=_long_lived_cursor, args=(inst, done, go_on))
    child.start()
    try:
        assert done.wait(60)
        d = _delta(inst.counters(), before)  # the child's connection is still open
        assert d["bytes_decrypted"] >= 0.9 * inst.path.stat().st_size, d
    finally:
        go_on.set()
        child.join(60)


@pytest.mark.server
@mariadb
def test_mariadb_settles_the_purge_an_undo_leaves_behind(mariadb_pair) -> None:
    """The sql workload's wait after an untimed undo (Settler): the rows a DELETE marked are purged when it returns,
    the first time by the server's own wait, then by the history length read while a waker runs that wait; a wait
    the server refuses leaves the connection usable and says False."""
    from dataclasses import replace

    from tdebench.workloads.sql.settler import Settler

    inst = mariadb_pair["none"]
    conn = inst.connect()
    settler = Settler(inst.connect, inst.dialect)
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE settle_probe (id INT PRIMARY KEY, pad CHAR(200))")
        for attempt in range(2):  # the server's own wait, then the poll beside a waker
            cur.execute("INSERT INTO settle_probe SELECT seq, 'x' FROM seq_1_to_20000")
            conn.commit()
            reader = inst.connect()  # a read view held open: purge cannot start while the deletes commit
            try:
                reader.cursor().execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                for first in range(1, 20001, 50):
                    cur.execute(f"DELETE FROM settle_probe WHERE id BETWEEN {first} AND {first + 49}")
                    conn.commit()
            finally:
                reader.close()
            assert settler.settle(conn) is True
            assert len(settler.wakers) == attempt  # no waker for the first wait, one for the second
            cur.execute("SHOW ENGINE INNODB STATUS")
            status = cur.fetchall()[0][2]
            length = int(status.split("History list length")[1].split()[0])
            assert length < 40, length  # 400 committed deletes waited for purge
        settler.close()
        refused = Settler(inst.connect, replace(inst.dialect, settle_sql="SET GLOBAL no_such_variable = 0"))
        assert refused.settle(conn) is False and refused.settle(conn) is False and not refused.wakers
        cur = conn.cursor()
        cur.execute("SELECT COUNT(*) FROM settle_probe")
        assert cur.fetchall()[0][0] == 0
        cur.execute("DROP TABLE settle_probe")
        conn.commit()
    finally:
        settler.close()
        conn.close()
