"""What ``tdebench capture`` reads from a server's log stays where it belongs: statements that carry a password or
a key are never parsed, printed or written (only counted by kind), the libraries' own warnings (sqlglot's quotes
the statement it cannot parse) never reach the console, labels in capture.json show a statement's shape only,
and ``--redact-literals`` writes statements whose values are drawn from the captured data and still find rows.

The source here is an SQLite file with a MariaDB slow log (the servers' own logs are tested in
tests/e2e/test_capture.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tdebench.sqltext.credentials import credential_kind
from tdebench.sqltext.serverlog import read_log

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ["pw-CreateUser-1", "pw-AlterUser-2", "pw-SetPassword-3", "pw-Grant-4", "pw-AesKey-5", "pw-Role-6",
           "pw-Pgp-7"]
CREDENTIALS = [
    ("CREATE USER", "CREATE USER 'cap'@'127.0.0.1' IDENTIFIED BY 'pw-CreateUser-1'"),
    ("ALTER USER", "ALTER USER 'cap'@'%' IDENTIFIED BY 'pw-AlterUser-2'"),
    ("SET PASSWORD", "SET PASSWORD FOR 'cap'@'%' = PASSWORD('pw-SetPassword-3')"),
    ("GRANT ... IDENTIFIED BY", "GRANT SELECT ON orders.* TO 'cap'@'%' IDENTIFIED BY 'pw-Grant-4'"),
    ("aes_decrypt()", "SELECT AES_DECRYPT(name, 'pw-AesKey-5') FROM customers"),
    ("ALTER ROLE", "/* app */ ALTER ROLE capture WITH PASSWORD 'pw-Role-6'"),
    ("pgp_sym_encrypt()", "INSERT INTO orders (order_id, customer_id, total) VALUES (9, 1, "
                          "pgp_sym_encrypt('12', 'pw-Pgp-7'))"),
]
# the application's own statements: literal values that are not in the captured data
APPLICATION = (["SELECT name FROM customers WHERE city = 'Secretville' ORDER BY name"] * 3
               + ["SELECT order_id, total FROM orders WHERE customer_id = 4242 AND total >= 99.5"] * 2
               + ["INSERT INTO orders (order_id, customer_id, total) VALUES (777001, 3, 12.5)",
                  "CALL audit('Marker-Call-8')"])  # sqlglot warns about this one, quoting it


@pytest.mark.parametrize("kind, text", CREDENTIALS)
def test_credential_statements_are_known_by_kind(kind, text):
    assert credential_kind(text) == kind


@pytest.mark.parametrize("text", ["SELECT * FROM orders WHERE id = 1", "SELECT encode(body, 'hex') FROM files",
                                  "UPDATE users SET encrypted = 1", "SELECT password_hash_algo FROM settings",
                                  "SELECT decode(x, 'base64') FROM t"])
def test_ordinary_statements_carry_no_credential(text):
    assert credential_kind(text) is None


def slow_log(statements: list[str]) -> str:
    head = ("/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:\n"
            "Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n")
    entries = [f"# User@Host: app[app] @  [127.0.0.1]\n# Thread_id: 8  Schema: shop  QC_hit: No\n"
               f"# Query_time: 0.00{i % 9 + 1}000  Lock_time: 0.000045  Rows_sent: 3  Rows_examined: 3\n"
               f"SET timestamp={1732664701 + i};\n{text};\n" for i, text in enumerate(statements)]
    return head + "".join(entries)


def test_the_log_reader_leaves_credentials_out_and_counts_them(tmp_path):
    path = tmp_path / "slow.log"
    path.write_text(slow_log([t for _, t in CREDENTIALS] + APPLICATION))
    _, found = read_log(path)
    assert len(found) == len(APPLICATION)
    assert not any(secret in s.text for s in found for secret in SECRETS)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """An SQLite shop and the slow log of its application's window, credentials and all."""
    base = tmp_path_factory.mktemp("capture-secrets")
    db = base / "shop.db"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(40), city VARCHAR(40));"
                       "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL "
                       "REFERENCES customers (id), total DECIMAL(10,2));")
    conn.executemany("INSERT INTO customers VALUES (?, ?, ?)",
                     [(i, f"name{i}", ["Lyon", "Porto", "Graz"][i % 3]) for i in range(1, 61)])
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                     [(i, i % 60 + 1, round(10 + i * 1.25, 2)) for i in range(1, 301)])
    conn.commit()
    conn.close()
    log = base / "slow.log"
    log.write_text(slow_log([t for _, t in CREDENTIALS] + APPLICATION))
    return db, log


def capture(source, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    db, log = source
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tdebench", "capture", "--from", str(db), "--log", str(log),
                           "--out", str(out), *extra], capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)


def everything(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


def test_capture_prints_and_writes_no_credential_and_counts_them(source, tmp_path):
    out = tmp_path / "captured"
    done = capture(source, out)
    assert done.returncode == 0, done.stderr[-2000:]
    console = done.stdout + done.stderr
    for secret in [*SECRETS, "Marker-Call-8", "Secretville", "4242"]:
        assert secret not in console, f"{secret} on the console:\n{console}"
    files = everything(out)
    assert not [s for s in SECRETS if s in files]
    assert "Secretville" in (out / "queries" / "q01_customers.sql").read_text()  # the values as sent, by default
    manifest = json.loads((out / "capture.json").read_text())
    assert manifest["credential_statements_skipped"] == dict(Counter(kind for kind, _ in CREDENTIALS))
    assert manifest["literals"] == "as the application sent them"
    assert "7 statement(s) that carry a password or a key" in done.stderr


def test_redact_literals_draws_values_from_the_captured_data(source, tmp_path):
    out = tmp_path / "captured"
    done = capture(source, out, "--redact-literals")
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((out / "capture.json").read_text())
    assert manifest["literals"] == "drawn from the captured data (--redact-literals)"
    assert {s["name"] for s in manifest["steps"]} == {"q01_customers", "q02_orders", "w01_orders"}
    files = everything(out / "queries") + everything(out / "writes")
    for value in [*SECRETS, "Secretville", "4242", "99.5", "777001"]:
        assert value not in files, f"{value} in a captured statement"
    conn = sqlite3.connect(source[0])  # the captured data is the source's
    for name in ("q01_customers", "q02_orders"):
        sql = (out / "queries" / f"{name}.sql").read_text()
        assert conn.execute(sql.split("\n", 1)[1].rstrip().rstrip(";")).fetchall(), f"{name} finds no row: {sql}"
    write = (out / "writes" / "w01_orders.sql").read_text().split("\n", 1)[1]
    conn.execute(write.rstrip().rstrip(";"))  # a new key: no row has it
    undo = (out / "writes" / "w01_orders.undo.sql").read_text().split("\n", 1)[1]
    assert conn.execute(undo.rstrip().rstrip(";")).rowcount == 1
    conn.close()
