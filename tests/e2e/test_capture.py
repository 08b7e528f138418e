"""``tdebench capture`` end to end: a private MariaDB and a private PostgreSQL, loaded with
docs/examples/orders-sql and exercised by an application script that leaves a slow log / csvlog; a capture from
each (from the server's statistics and from the log) writes a directory that ``tdebench run --workload sql
--engine sqlite,mariadb,postgres --trials 1 --warmup 0`` runs with exit 0 and equal answers. Capture leaves the source's
tables and settings unchanged and never prints or writes the password. Bad input: one line, exit 2 or 3, before
any work."""

from __future__ import annotations

import json
import os
from collections import Counter
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.capture_sources import MariadbSource, PostgresSource, checksums, exercise
from tests.e2e.mariadb_by_hand import HandServer, binaries, free_port

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["customers", "products", "orders", "order_lines"]

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(binaries() is None or not list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")),
                       reason="needs mariadbd and PostgreSQL (Debian packages mariadb-server, postgresql)"),
]


def tdebench(*args: str, password: str | None = None, env: dict[str, str] | None = None,
             timeout: int = 900) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    environ.pop("TDEBENCH_PASSWORD_SOURCE", None)
    if password is not None:
        environ["TDEBENCH_PASSWORD_SOURCE"] = password
    return subprocess.run([sys.executable, "-m", "tdebench", *args], cwd=ROOT, env=environ, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line_error(done: subprocess.CompletedProcess[str], code: int) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == code, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("tdebench: error:") and "fix:" in lines[0], done.stderr[-2000:]
    return lines[0]


class Exercised:
    """A source server after the application's window: its log, and its state before any capture."""

    def __init__(self, source: Any, tmp: Path) -> None:
        self.source, self.tmp = source, tmp
        source.start()
        source.load(tmp / "generated")
        conn = source.app()
        try:
            self.sent = exercise(conn, "%s")
            self.secrets = source.use_credentials()  # never to be seen again: output, captured files, runs
            # the window ends here: the checksums below are the test's, not the application's
            self.log = source.window_log(tmp / ("slow.log" if isinstance(source, MariadbSource) else "window.csv"))
            self.before = checksums(conn, TABLES)
        finally:
            conn.close()
        self.settings = source.settings()

    def capture(self, out: Path, *extra: str, user: str = "capture") -> subprocess.CompletedProcess[str]:
        return tdebench("capture", "--from", self.source.url(user), "--out", str(out), *extra,
                        password=self.source.password)

    def unchanged(self) -> None:
        conn = self.source.app()
        try:
            assert checksums(conn, TABLES) == self.before, "capture changed the source's tables"
        finally:
            conn.close()
        assert self.source.settings() == self.settings, "capture changed a setting of the source"


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory):
    source = MariadbSource()
    try:
        yield Exercised(source, tmp_path_factory.mktemp("mariadb-source"))
    finally:
        source.stop()


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    source = PostgresSource()
    try:
        yield Exercised(source, tmp_path_factory.mktemp("postgres-source"))
    finally:
        source.stop()


def no_secret_in(directory: Path, secrets: list[str]) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not [s for s in secrets if s in text], f"{path} holds a password or key"


def check_captured(out: Path, done: subprocess.CompletedProcess[str], source: Exercised, writes: bool) -> dict[str, Any]:
    """A capture that exited 0 and wrote the hot statements, with neither the capture account's password nor any
    password or key of the window's statements on its console or in its files."""
    assert done.returncode == 0, done.stderr[-3000:]
    secrets = [source.source.password, *source.secrets]
    assert not [s for s in secrets if s in done.stdout + done.stderr], done.stdout + done.stderr
    no_secret_in(out, secrets)
    manifest = json.loads((out / "capture.json").read_text())
    assert {t: v["rows"] > 0 for t, v in manifest["tables"].items()} == dict.fromkeys(TABLES, True)
    kinds = {s["kind"] for s in manifest["steps"]}
    assert "query" in kinds and (("write" in kinds) == writes), manifest["steps"]
    calls = {s["name"]: s["calls"] for s in manifest["steps"]}
    assert max(calls.values()) == 30, calls  # the hot queries' call counts are their weights
    toml = (out / "workload.toml").read_text()
    assert all(f"{name} = {count}" in toml for name, count in calls.items()), toml
    return manifest


def check_skipped(manifest: dict[str, Any], source: Exercised) -> None:
    """The window's statements with passwords or keys are counted by kind, nothing more."""
    assert manifest["credential_statements_skipped"] == dict(Counter(source.secrets.values())), manifest


def check_runs(out: Path, tmp: Path, source: Exercised) -> None:
    """``tdebench run --workload sql`` on the three engines: exit 0, answers equal to the plain twins', report, and
    no password or key of the source's window in its output or results."""
    run = tmp / "run"
    done = tdebench("run", "--workload", "sql", "--workload-dir", str(out), "--engine", "sqlite,mariadb,postgres",
                    "--trials", "1", "--warmup", "0", "--duration", "20ms", "--out", str(run), "--data-dir", str(tmp / "data"), "--work-dir",
                    str(tmp / "work"), env={"XDG_STATE_HOME": str(tmp / "state")})
    assert done.returncode == 0, done.stderr[-3000:]
    verification = json.loads((run / "verification.json").read_text())["configs"]
    for label, entry in verification.items():
        assert entry["passed"], (label, entry)
        assert entry.get("answers_equal") in (True, None), (label, entry.get("answers"))
    assert sum(e.get("answers_equal") is True for e in verification.values()) == 3, verification.keys()
    assert (run / "report" / "index.html").is_file()
    secrets = [source.source.password, *source.secrets]
    assert not [s for s in secrets if s in done.stdout + done.stderr]
    no_secret_in(run, secrets)


@pytest.mark.slow(seconds=270)  # two runs on three engines, a replay on twins
class TestFromMariadb:
    """Captures from the MariaDB source (under pytest-xdist one unit of work, with that source only)."""

    def test_mariadb_capture_from_statistics(self, mariadb, tmp_path):
        out = tmp_path / "captured"
        done = mariadb.capture(out)
        manifest = check_captured(out, done, mariadb, writes=True)
        assert manifest["statements_from"] == "statistics"
        assert manifest["values_from"] == "events_statements_history_long"
        assert (out / "writes" / "w01_orders.undo.sql").is_file()
        assert manifest["tables"]["orders"]["rows_left_out_for_writes"] == 3  # the window's three new orders
        mariadb.unchanged()

    @pytest.mark.heavy  # the slow log's capture below runs on the three engines in the default suite
    def test_mariadb_capture_from_statistics_runs_on_three_engines(self, mariadb, tmp_path):
        out = tmp_path / "captured"
        check_captured(out, mariadb.capture(out), mariadb, writes=True)
        check_runs(out, tmp_path, mariadb)
        mariadb.unchanged()

    def test_mariadb_capture_from_the_slow_log_runs_on_three_engines(self, mariadb, tmp_path):
        out = tmp_path / "captured"
        done = mariadb.capture(out, "--log", str(mariadb.log), "--max-rows", "5000")
        manifest = check_captured(out, done, mariadb, writes=True)
        check_skipped(manifest, mariadb)
        assert manifest["log"]["format"] == "mysql-slow" and manifest["log"]["statements"] >= mariadb.sent
        lines = manifest["tables"]["order_lines"]
        assert lines["cut_by_max_rows"] and lines["rows"] == 5000
        assert "FOREIGN KEY" not in (out / "schema.sql").read_text()  # keys may point to rows not captured
        check_runs(out, tmp_path, mariadb)
        mariadb.unchanged()

    def test_bad_input_is_refused_in_one_line(self, mariadb, tmp_path):
        out = tmp_path / "out"
        line = one_line_error(tdebench("capture", "--from", f"mariadb://capture@127.0.0.1:{free_port()}/orders",
                                       "--out", str(out), password="x" * 12), 3)
        assert "cannot connect" in line and "x" * 12 not in line
        line = one_line_error(mariadb.capture(out, user="nogrant"), 3)
        assert "GRANT SELECT ON performance_schema.*" in line and "--log" in line
        (tmp_path / "app.log").write_text("hello\nthis is not a server log\n")
        line = one_line_error(mariadb.capture(out, "--log", str(tmp_path / "app.log")), 2)
        assert "not a log format capture reads" in line
        (tmp_path / "empty.log").write_text("")
        assert "is empty" in one_line_error(mariadb.capture(out, "--log", str(tmp_path / "empty.log")), 2)
        line = one_line_error(tdebench("capture", "--from", "mariadb://capture:secret@127.0.0.1/orders", "--out",
                                       str(out)), 2)
        assert "contains a password" in line and "secret" not in line
        assert not out.exists(), "a refused capture left its directory"
        mariadb.unchanged()

    def test_a_type_that_cannot_be_mapped_is_named_with_the_fix(self, mariadb, tmp_path):
        # after the tests that check the source unchanged: this one adds a database to it
        mariadb.source.server.sql("CREATE DATABASE files", "CREATE TABLE files.attachments (id INT PRIMARY KEY, "
                                  "body BLOB)", "GRANT SELECT ON files.* TO 'capture'@'127.0.0.1'")
        done = tdebench("capture", "--from", mariadb.source.url().replace("/orders", "/files"), "--out",
                        str(tmp_path / "out"), "--statements", "none", password=mariadb.source.password)
        line = one_line_error(done, 2)
        assert "column attachments.body has type blob" in line and "--tables" in line

    def test_replay_of_the_slow_log_on_twins(self, mariadb, tmp_path):
        """The slow log replayed on a plain and an encrypted MariaDB loaded with its capture: exit 0, one session and
        every logged statement replayed, per-digest latencies recorded for both twins."""
        captured = tmp_path / "captured"
        assert mariadb.capture(captured, "--log", str(mariadb.log)).returncode == 0
        run = tmp_path / "run"
        done = tdebench("run", "--workload", "replay", "--workload-dir", str(captured), "--log",
                        str(mariadb.log), "--engine", "mariadb", "--encryption", "none,tde:aes-256-ctr", "--trials",
                        "2", "--warmup", "0", "--out", str(run), "--data-dir", str(tmp_path / "data"), "--work-dir",
                        str(tmp_path / "work"), env={"XDG_STATE_HOME": str(tmp_path / "state")})
        assert done.returncode == 0, done.stderr[-3000:]
        rows = [line.split(",") for line in (run / "measurements.csv").read_text().splitlines()[1:]]
        replay = [r for r in rows if r[7] == "replay" and r[14] != "warmup"]
        totals = {(r[3], r[10]): float(r[11]) for r in replay if r[9] == "total"}
        for label in ("mariadb-none", "mariadb-tde-aes-256-ctr"):
            assert totals[(label, "sessions")] == 1 and totals[(label, "statements")] == mariadb.sent, totals
            assert totals[(label, "failed")] == 0, totals  # the INSERTs' rows are not in the captured data
            digests = {r[9] for r in replay if r[3] == label and r[10] == "latency_p95"}
            assert len(digests) == 4, digests  # three reads and the INSERT
        verification = json.loads((run / "verification.json").read_text())["configs"]
        assert verification["mariadb-tde-aes-256-ctr"]["answers_equal"] is True
        assert "d01_" in (run / "report" / "index.html").read_text()


@pytest.mark.slow(seconds=240)  # two runs on three engines
class TestFromPostgres:
    """Captures from the PostgreSQL source (under pytest-xdist one unit of work, with that source only)."""

    def test_postgres_capture_from_statistics_with_the_log_for_values(self, postgres, tmp_path):
        out = tmp_path / "captured"
        done = postgres.capture(out, "--statements", "statistics", "--log", str(postgres.log))
        manifest = check_captured(out, done, postgres, writes=True)
        assert manifest["ranked_by"] == "total time (server statistics)"
        assert manifest["values_from"] == "the log (--log)"
        postgres.unchanged()

    @pytest.mark.heavy  # the csvlog's capture below runs on the three engines in the default suite
    def test_postgres_capture_from_statistics_runs_on_three_engines(self, postgres, tmp_path):
        out = tmp_path / "captured"
        done = postgres.capture(out, "--statements", "statistics", "--log", str(postgres.log))
        check_captured(out, done, postgres, writes=True)
        check_runs(out, tmp_path, postgres)
        postgres.unchanged()

    def test_postgres_statistics_without_values_are_listed_never_invented(self, postgres, tmp_path):
        out = tmp_path / "captured"
        done = postgres.capture(out, "--tables", "customers,orders")
        assert done.returncode == 0, done.stderr[-2000:]
        manifest = json.loads((out / "capture.json").read_text())
        assert any("city = %s" in item["statement"] and "no literal values" in item["reason"]
                   for item in manifest["left_out"]), manifest["left_out"]
        # kept: only statements that have no values to find (here the test's own checksum reads, SELECT * ... ORDER BY)
        for path in (out / "queries").glob("*.sql") if (out / "queries").exists() else []:
            assert "$" not in path.read_text() and "customer_id = " not in path.read_text(), path.read_text()
        assert not (out / "writes").exists()
        assert set(manifest["tables"]) == {"customers", "orders"}

    def test_postgres_capture_from_the_csvlog_runs_on_three_engines(self, postgres, tmp_path):
        """With --redact-literals: the statements' values are drawn from the captured data, and still run."""
        out = tmp_path / "captured"
        done = postgres.capture(out, "--log", str(postgres.log), "--redact-literals")
        manifest = check_captured(out, done, postgres, writes=True)
        check_skipped(manifest, postgres)
        assert manifest["log"]["format"] == "postgres-csv"
        assert manifest["literals"] == "drawn from the captured data (--redact-literals)"
        write = (out / "writes" / "w01_orders.sql").read_text()
        assert "9000" not in write, write  # the window's new orders' keys: not in the data, so never written
        check_runs(out, tmp_path, postgres)
        postgres.unchanged()

    def test_bad_input_is_refused_in_one_line(self, postgres, tmp_path):
        out = tmp_path / "out"
        line = one_line_error(postgres.capture(out, user="nogrant"), 3)
        assert "GRANT pg_read_all_stats TO nogrant" in line
        with postgres.source.admin() as admin:  # a database without pg_stat_statements
            admin.execute("CREATE DATABASE other")
        with postgres.source.admin("other") as admin:
            admin.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            admin.execute("GRANT SELECT ON t TO capture")
        done = tdebench("capture", "--from", postgres.source.url().replace("/orders", "/other"), "--out", str(out),
                        password=postgres.source.password)
        line = one_line_error(done, 3)
        assert "pg_stat_statements is not installed in database other" in line and "shared_preload_libraries" in line
        assert not out.exists(), "a refused capture left its directory"


# bad input: one line, before any work ------------------------------------------------------------------------
def test_performance_schema_off_says_how_to_turn_it_on(tmp_path):
    root = Path(__import__("tempfile").mkdtemp(prefix="e2e-mariadb-", dir="/tmp"))
    root.chmod(0o711)
    server = HandServer(root, "plain")  # performance_schema=OFF, as BASE_CNF has it
    try:
        server.install()
        server.start()
        server.sql("CREATE DATABASE orders", "CREATE TABLE orders.t (id INT PRIMARY KEY)",
                   "CREATE USER 'capture'@'127.0.0.1' IDENTIFIED BY 'pw-for-this-test-only'",
                   "GRANT SELECT ON orders.* TO 'capture'@'127.0.0.1'")
        done = tdebench("capture", "--from", f"mariadb://capture@127.0.0.1:{server.port}/orders", "--out",
                        str(tmp_path / "out"), password="pw-for-this-test-only")
        line = one_line_error(done, 3)
        assert "performance_schema is OFF" in line and "performance_schema=ON" in line and "--log" in line
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
