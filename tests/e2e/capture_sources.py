"""Source servers for ``tdebench capture`` tests, started by hand as a DBA runs them (not tdebench's engines): a
MariaDB (:mod:`tests.e2e.mariadb_by_hand`) with performance_schema and the slow log on, and a PostgreSQL with
pg_stat_statements and the csvlog on; each loaded with docs/examples/orders-sql and exercised by an
application-like script, with a capture account (generated password) that has only what capture needs."""

from __future__ import annotations

import csv
import hashlib
import os
import pwd
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tdebench.workloads.sql.layout import load_workload_dir
from tests.e2e.mariadb_by_hand import SERVICE_USER, HandServer, free_port, new_root, password

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "docs" / "examples" / "orders-sql"
PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))


def orders_rows(tmp: Path) -> dict[str, tuple[list[str], list[list[str | None]]]]:
    """Table -> (columns, rows) of docs/examples/orders-sql (its generator run into ``tmp``)."""
    tmp.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "generate.py", "--orders", "2000", str(tmp)], cwd=ORDERS, check=True,
                   capture_output=True, timeout=120)
    out = {}
    for path in [*sorted((ORDERS / "data").glob("*.csv")), *sorted(tmp.glob("*.*sv"))]:
        delimiter = "\t" if path.suffix == ".tsv" else ","
        with open(path, newline="", encoding="utf-8") as handle:
            reader = list(csv.reader(handle, delimiter=delimiter) if delimiter == "," else
                          (line.rstrip("\n").split("\t") for line in handle))
        rows = [[None if v in ("", "\\N") else v for v in r] for r in reader[1:]]
        out[path.stem] = (reader[0], rows)
    order = load_workload_dir(ORDERS, read_data=False).info.names  # parents first
    return {t: out[t] for t in order}


def exercise(conn: Any, marker: str, rounds: int = 30) -> int:
    """An application's session: the shop's hot queries with changing literal values, and inserts of new orders
    (with their keys); ``marker`` is the parameter style (``%s``). Returns the statements sent."""
    rng = random.Random(5)
    cur = conn.cursor()
    sent = 0
    for i in range(rounds):
        customer = rng.randrange(1, 300)
        cur.execute("SELECT o.order_id, o.ordered_at, o.status, SUM(l.quantity * l.unit_price) AS total FROM orders o "
                    "JOIN order_lines l ON l.order_id = o.order_id WHERE o.customer_id = " + str(customer) +
                    " GROUP BY o.order_id, o.ordered_at, o.status ORDER BY o.ordered_at DESC, o.order_id")
        cur.fetchall()
        cur.execute("SELECT customer_id, name, email FROM customers WHERE city = '" + rng.choice(["Lyon", "Porto"]) +
                    "' AND signed_up >= '2021-01-01' ORDER BY name, customer_id")
        cur.fetchall()
        sent += 2
        if i % 3 == 0:
            cur.execute("SELECT p.category, COUNT(*) AS n_lines FROM order_lines l JOIN products p ON p.product_id = "
                        "l.product_id WHERE l.quantity > " + str(rng.randrange(1, 4)) + " GROUP BY p.category "
                        "ORDER BY p.category")
            cur.fetchall()
            sent += 1
        if i % 10 == 0:
            order = 900000 + i
            cur.execute(f"INSERT INTO orders (order_id, customer_id, ordered_at, status, shipped_on, ship_address) "
                        f"VALUES ({order}, {customer}, '2025-03-0{1 + i % 9} 10:00:00', 'new', NULL, 'Rue {i}')")
            sent += 1
        conn.commit()
    return sent


def checksums(conn: Any, tables: list[str]) -> dict[str, str]:
    """A hash of every table's rows (ordered by all columns)."""
    cur = conn.cursor()
    out = {}
    for table in tables:
        cur.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
        out[table] = hashlib.sha256(repr(cur.fetchall()).encode()).hexdigest()
    conn.commit()
    return out


# MariaDB ------------------------------------------------------------------------------------------------------
class MariadbSource:
    """A MariaDB with performance_schema (digests and history_long consumers) and the slow log."""

    def __init__(self) -> None:
        self.root = new_root()
        self.server = HandServer(self.root, "src")
        self.password = password()
        self.slow_log = self.server.dir / "slow.log"
        self.server.extra_cnf = ["performance_schema=ON", "performance-schema-consumer-events-statements-current=ON",
                                 "performance-schema-consumer-events-statements-history-long=ON",
                                 "slow_query_log=ON", f"slow_query_log_file={self.slow_log}", "long_query_time=0",
                                 "log_slow_verbosity=query_plan"]  # after BASE_CNF's performance_schema=OFF: wins

    def start(self) -> None:
        self.server.install()
        self.server.start()

    def url(self, user: str = "capture") -> str:
        return f"mariadb://{user}@127.0.0.1:{self.server.port}/orders"

    def load(self, tmp: Path) -> None:
        wd = load_workload_dir(ORDERS, read_data=False)
        self.server.sql("CREATE DATABASE orders", "CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY '" + self.password + "'",
                        "GRANT ALL ON orders.* TO 'app'@'127.0.0.1'",
                        "CREATE USER 'capture'@'127.0.0.1' IDENTIFIED BY '" + self.password + "'",
                        "GRANT SELECT ON orders.* TO 'capture'@'127.0.0.1'",
                        "GRANT SELECT ON performance_schema.* TO 'capture'@'127.0.0.1'",
                        "CREATE USER 'nogrant'@'127.0.0.1' IDENTIFIED BY '" + self.password + "'",
                        "GRANT SELECT ON orders.* TO 'nogrant'@'127.0.0.1'")
        conn = self.app()
        cur = conn.cursor()
        for statement in wd.schema_for("mariadb").create:
            cur.execute(statement)
        for table, (columns, rows) in orders_rows(tmp).items():
            cur.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
                            rows)
        conn.commit()
        for statement in wd.schema_for("mariadb").after_load:
            cur.execute(statement)
        conn.close()
        self.server.sql("TRUNCATE TABLE performance_schema.events_statements_summary_by_digest",
                        "TRUNCATE TABLE performance_schema.events_statements_history_long")
        self.mark = self.slow_log.stat().st_size  # the load is not the application's workload

    def use_credentials(self) -> dict[str, str]:
        """What a DBA does in the window, as a production log shows it: statements with passwords (secret -> the
        kind capture counts it as)."""
        made = {password(): kind for kind in ("CREATE USER", "ALTER USER", "SET PASSWORD", "GRANT ... IDENTIFIED BY")}
        s1, s2, s3, s4 = made
        self.server.sql(f"CREATE USER 'dba_new'@'127.0.0.1' IDENTIFIED BY '{s1}'",
                        f"ALTER USER 'dba_new'@'127.0.0.1' IDENTIFIED BY '{s2}'",
                        f"SET PASSWORD FOR 'dba_new'@'127.0.0.1' = PASSWORD('{s3}')",
                        f"GRANT USAGE ON *.* TO 'dba_new'@'127.0.0.1' IDENTIFIED BY '{s4}'")
        return made

    def window_log(self, target: Path) -> Path:
        """The slow log of the exercise only (what a DBA copies out for the capture window)."""
        time.sleep(0.5)  # the server writes a statement's entry after its client has the answer
        with open(self.slow_log, "rb") as handle:
            handle.seek(self.mark)
            target.write_bytes(handle.read())
        return target

    def app(self) -> Any:
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.server.port, user="app", password=self.password,
                               database="orders", autocommit=False)

    def settings(self) -> list[tuple[Any, ...]]:
        return self.server.sql("SHOW GLOBAL VARIABLES")

    def stop(self) -> None:
        from tests.e2e.mariadb_by_hand import destroy

        destroy([self.server], self.root)


# PostgreSQL ---------------------------------------------------------------------------------------------------
class PostgresSource:
    """A PostgreSQL with pg_stat_statements and the csvlog (log_min_duration_statement=0), run as the service
    user on 127.0.0.1 at a free port."""

    def __init__(self) -> None:
        self.root = new_root()
        self.data = self.root / "data"
        self.port = free_port()
        self.password = password()
        self.process: subprocess.Popen[bytes] | None = None
        self.user = pwd.getpwnam(SERVICE_USER) if os.geteuid() == 0 else None

    def _run(self, argv: list[str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(argv, check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                              user=self.user.pw_uid if self.user else None, **kw)

    def start(self) -> None:
        bin_dir = PG_BIN[-1]
        if self.user:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        self._run([str(bin_dir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        conf = ["listen_addresses = '127.0.0.1'", f"port = {self.port}", f"unix_socket_directories = '{self.root}'",
                "shared_preload_libraries = 'pg_stat_statements'", "logging_collector = on",
                "log_destination = 'csvlog'", "log_directory = 'log'", "log_filename = 'pg.log'",
                "log_min_duration_statement = 0", "shared_buffers = 32MB", "fsync = off"]
        with open(self.data / "postgresql.conf", "a") as handle:
            handle.write("\n".join(conf) + "\n")
        hba = self.data / "pg_hba.conf"
        hba.write_text("local all postgres trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
        self._run([str(bin_dir / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.root / "server.log"), "start"])
        self.process = True  # type: ignore[assignment]

    @property
    def csvlog(self) -> Path:
        return self.data / "log" / "pg.csv"

    def url(self, user: str = "capture") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/orders"

    def admin(self, database: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(host=str(self.root), port=self.port, user="postgres", dbname=database,
                               autocommit=True)

    def load(self, tmp: Path) -> None:
        with self.admin() as conn:
            conn.execute("CREATE DATABASE orders")
            for user in ("app", "capture", "nogrant"):
                conn.execute(f"CREATE USER {user} PASSWORD '{self.password}'")
            conn.execute("GRANT pg_read_all_stats TO capture")
        wd = load_workload_dir(ORDERS, read_data=False)
        with self.admin("orders") as conn:
            conn.execute("CREATE EXTENSION pg_stat_statements")
            conn.execute("CREATE EXTENSION pgcrypto")  # the application encrypts with a key in its statements
            conn.execute("GRANT ALL ON SCHEMA public TO app")
            conn.execute("ALTER DEFAULT PRIVILEGES FOR USER app IN SCHEMA public GRANT SELECT ON TABLES TO capture, "
                         "nogrant")
        conn = self.app()
        cur = conn.cursor()
        for statement in wd.schema_for("postgres").create:
            cur.execute(statement)
        for table, (columns, rows) in orders_rows(tmp).items():
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        for statement in wd.schema_for("postgres").after_load:
            cur.execute(statement)
        conn.commit()
        conn.close()
        with self.admin("orders") as admin:
            admin.execute("SELECT pg_stat_statements_reset()")
        time.sleep(0.2)
        self.mark = self.csvlog.stat().st_size if self.csvlog.exists() else 0

    def use_credentials(self) -> dict[str, str]:
        """A DBA's role statements with passwords and the application's pgcrypto call with its key, in the window
        (secret -> the kind capture counts it as)."""
        made = {password(): kind for kind in ("CREATE ROLE", "ALTER ROLE", "pgp_sym_encrypt()")}
        s1, s2, key = made
        with self.admin("orders") as admin:
            admin.execute(f"CREATE ROLE dba_new LOGIN PASSWORD '{s1}'")
            admin.execute(f"ALTER ROLE dba_new PASSWORD '{s2}'")
        with self.app() as conn:
            conn.execute(f"SELECT pgp_sym_encrypt(name, '{key}') FROM customers WHERE customer_id = 7").fetchall()
        return made

    def app(self) -> Any:
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user="app", password=self.password, dbname="orders")

    def window_log(self, target: Path) -> Path:
        """The csvlog of the exercise only (what a DBA copies out for the capture window)."""
        time.sleep(0.5)
        with open(self.csvlog, "rb") as handle:
            handle.seek(self.mark)
            target.write_bytes(handle.read())
        return target

    def settings(self) -> list[tuple[Any, ...]]:
        with self.admin() as conn:
            return conn.execute("SELECT name, setting FROM pg_settings ORDER BY name").fetchall()

    def stop(self) -> None:
        if self.process is not None:
            try:
                self._run([str(PG_BIN[-1] / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])
            except Exception:  # noqa: BLE001 - the directory goes anyway
                pass
        shutil.rmtree(self.root, ignore_errors=True)
