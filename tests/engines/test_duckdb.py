"""The duckdb engine beyond the conformance kit: what it refuses before any work (no httpfs, so no OpenSSL; TPC-C,
whose virtual users are processes of their own), and the encrypted twin's WAL and spill files holding none of the
canaries that the plain twin's hold. Real DuckDB databases throughout; only where tdebench looks for the httpfs
package is pointed at an empty directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

duckdb = pytest.importorskip("duckdb")

from tdebench.encryption import PLAIN, parse_spec  # noqa: E402
from tdebench.engines import Config, get_engine  # noqa: E402
from tdebench.engines.duckdb import extensions  # noqa: E402
from tdebench.errors import EnvironmentProblem, UsageError  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
GCM = parse_spec("tde:aes-256-gcm")
MARKERS = [f"tdbcanary-{i}-5f0c2e9a7b" for i in range(4)]


@pytest.fixture
def no_httpfs(monkeypatch, tmp_path):
    """The duckdb-ext-httpfs package as if not installed: its extension directory is an empty one."""
    monkeypatch.setattr(extensions, "extension_root", lambda: tmp_path)


def test_encrypted_spec_without_httpfs_is_refused_before_work(no_httpfs):
    engine = get_engine("duckdb")
    with pytest.raises(EnvironmentProblem) as err:
        engine.check_spec_available(GCM)
    line = err.value.one_line()
    assert "\n" not in line and "pip install" in line and extensions.HTTPFS_PACKAGE in line


def test_duckdb_itself_refuses_to_write_encrypted_without_openssl(monkeypatch, tmp_path):
    """With httpfs not loaded, DuckDB's own refusal ("read-only crypto module") becomes the same one line."""
    from tdebench.engines.duckdb import engine as module

    monkeypatch.setattr(module.extensions, "load_httpfs", lambda conn: None)
    inst = get_engine("duckdb").create_instance(Config("duckdb", GCM), tmp_path)
    try:
        with pytest.raises(EnvironmentProblem) as err:
            inst.start()
        assert extensions.INSTALL_FIX in err.value.one_line() and "read-only crypto module" in err.value.one_line()
    finally:
        inst.destroy()


def _tdebench_without_httpfs(*args: str) -> subprocess.CompletedProcess[str]:
    code = ("import sys; from tdebench.engines.duckdb import extensions; extensions.extension_root = lambda: None; "
            "from tdebench.__main__ import run; sys.argv = ['tdebench', *sys.argv[1:]]; run()")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_without_httpfs_exits_3_in_one_line(tmp_path):
    done = _tdebench_without_httpfs("run", "--engine", "duckdb", "--encryption", "none,tde:aes-256-gcm",
                                    "--sf", "0.01", "--out", str(tmp_path / "run"))
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and extensions.HTTPFS_PACKAGE in done.stderr
    measured = tmp_path / "run" / "measurements.csv"  # refused before any work: nothing measured
    assert not measured.exists() or len(measured.read_text().splitlines()) <= 1


def test_tpcc_is_refused_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "tdebench", "run", "--engine", "duckdb", "--workload", "tpcc",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "does not run on" in done.stderr and "DuckDB" in done.stderr and "Traceback" not in done.stderr


def _instance(spec, tmp_path: Path, settings: dict[str, str] | None = None):
    inst = get_engine("duckdb").create_instance(Config("duckdb", spec, settings or {}), tmp_path / str(spec.label))
    inst.start()
    return inst


def _bytes(text: str) -> float:
    """'18.8 GiB' (DuckDB's way of showing a size) in bytes."""
    number, unit = text.split()
    return float(number) * 1024 ** ["bytes", "KiB", "MiB", "GiB", "TiB"].index(unit)


def _holds(paths: list[Path], marker: str) -> bool:
    return any(marker.encode() in p.read_bytes() for p in paths)


@pytest.mark.parametrize("text", ["none", "tde:aes-256-gcm", "tde:aes-256-ctr"])
def test_wal_holds_canaries_only_when_plain(text, tmp_path):
    """Rows committed but not checkpointed live in the WAL (a high checkpoint threshold keeps them there)."""
    inst = _instance(parse_spec(text), tmp_path, {"checkpoint_threshold": "1GB"})
    try:
        inst.plant_canaries(MARKERS)
        wal = [p for p in inst.data_dir.glob("*.wal") if p.stat().st_size]
        assert wal, "the rows should be in a WAL file"
        assert _holds(wal, MARKERS[0]) is (text == "none")
        assert inst.encryption_status()["enabled"] is (text != "none")
    finally:
        inst.destroy()


@pytest.mark.parametrize("spec", [PLAIN, GCM])
def test_spill_files_hold_canaries_only_when_plain(spec, tmp_path):
    inst = _instance(spec, tmp_path)
    try:
        inst.plant_canaries(MARKERS)
        with inst.threats().spill_probe(MARKERS) as probe:
            files = [p for p in inst.temp_dir.rglob("*") if p.is_file()]
            assert probe["spill_files"] > 0 and files
            assert _holds(files, MARKERS[1]) is spec.is_plain
    finally:
        inst.destroy()


def test_the_spill_probe_puts_back_the_global_settings_it_changes(tmp_path):
    """It once left preserve_insertion_order off, after which each single-row INSERT of a transaction took a row
    group of its own: RF1 at SF 1 ran out of memory under every memory limit tried."""
    inst = _instance(PLAIN, tmp_path)
    try:
        inst.plant_canaries(MARKERS)
        other = inst.connect_raw()
        # the buffer manager's limit (pragma_database_size), which RESET leaves at the probe's 48 MB
        settings = ("SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order'), "
                    "(SELECT memory_limit FROM pragma_database_size() LIMIT 1)")
        before = other.execute(settings).fetchone()
        with inst.threats().spill_probe(MARKERS):
            pass
        after = other.execute(settings).fetchone()
        # DuckDB's default limit is put back as current_setting() shows it, to 0.1 GiB
        assert after[1] is before[1] is True and after[0] == after[2]
        assert abs(_bytes(after[0]) / _bytes(before[0]) - 1) < 0.01, (before, after)
        other.execute("CREATE TABLE t (a INTEGER, b VARCHAR)")
        other.execute("BEGIN TRANSACTION")
        other.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x") for i in range(200)])
        used = other.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'"
                             ).fetchone()[0]
        other.execute("ROLLBACK")
        other.close()
        assert used < 8 * 1024 * 1024, f"200 single-row inserts held {used} bytes"
    finally:
        inst.destroy()


def test_foreign_keys_are_left_out_and_a_child_then_parent_delete_works(tmp_path):
    """DuckDB would refuse to delete parents after their children in one transaction with foreign keys declared
    (its over-eager constraint check); the instance creates the tables without them and says so."""
    inst = _instance(PLAIN, tmp_path)
    try:
        conn = inst.connect()
        inst.create_schema(conn, ["CREATE TABLE p (id INTEGER PRIMARY KEY)",
                                  "CREATE TABLE c (id INTEGER PRIMARY KEY, p_id INTEGER NOT NULL REFERENCES p (id))"])
        inst.create_constraints(conn, ["ALTER TABLE c ADD CONSTRAINT c_p_fk FOREIGN KEY (p_id) REFERENCES p (id)",
                                       "CREATE INDEX c_p_idx ON c (p_id)"])
        cur = conn.cursor()
        cur.execute("INSERT INTO p VALUES (1)")
        cur.execute("INSERT INTO c VALUES (10, 1)")
        cur.execute("BEGIN TRANSACTION")
        cur.execute("DELETE FROM c WHERE p_id = 1")
        cur.execute("DELETE FROM p WHERE id = 1")
        cur.execute("COMMIT")
        assert cur.execute("SELECT COUNT(*) FROM p").fetchone() == (0,)
        conn.close()
        assert inst.settings()["statements_left_out"] == ["ALTER TABLE c ... FOREIGN KEY",
                                                          "CREATE TABLE c ... REFERENCES"]
    finally:
        inst.destroy()


def test_keys_off_leaves_out_keys_and_indexes(tmp_path):
    inst = _instance(PLAIN, tmp_path, {"keys": "off"})
    try:
        conn = inst.connect()
        inst.create_schema(conn, ["CREATE TABLE p (id INTEGER NOT NULL)"])
        inst.create_constraints(conn, ["ALTER TABLE p ADD PRIMARY KEY (id)", "CREATE INDEX p_idx ON p (id)"])
        cur = conn.cursor()
        cur.execute("INSERT INTO p VALUES (1), (1)")  # no key: the duplicate is taken
        assert cur.execute("SELECT COUNT(*) FROM duckdb_indexes()").fetchone() == (0,)
        assert cur.execute("SELECT COUNT(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
                           ).fetchone() == (0,)
        conn.close()
        assert inst.settings()["statements_left_out"] == ["2 key and index statements (keys=off)"]
    finally:
        inst.destroy()
    with pytest.raises(UsageError):
        get_engine("duckdb").validate_settings({"keys": "maybe"})
