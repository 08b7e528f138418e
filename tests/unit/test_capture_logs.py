"""Server logs read by ``tdebench capture --log``: the four formats recognised and parsed (sessions, statement text
with its values, durations), statements grouped by normalized form, writes told from reads, and a file in no
known format or an empty one refused with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tdebench.sqltext.serverlog import detect, read_log
from tdebench.capture.statements import group_logged
from tdebench.errors import UsageError

SLOW = """/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time\t\t    Id Command\tArgument
# Time: 241126 23:45:01
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 8  Schema: orders  QC_hit: No
# Query_time: 0.000208  Lock_time: 0.000045  Rows_sent: 3  Rows_examined: 3
# Rows_affected: 0  Bytes_sent: 120
SET timestamp=1732664701;
SELECT name FROM customers WHERE city = 'Lyon';
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 9  Schema: orders  QC_hit: No
# Query_time: 0.000400  Lock_time: 0.000045  Rows_sent: 3  Rows_examined: 3
use orders;
SET timestamp=1732664702;
SELECT name
FROM customers WHERE city = 'Porto';
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 9  Schema: orders  QC_hit: No
# Query_time: 0.001000  Lock_time: 0.000045  Rows_sent: 0  Rows_examined: 0
SET timestamp=1732664703;
INSERT INTO customers (id, name, city) VALUES (7, 'Ada', 'Lyon');
"""

GENERAL = """/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock
Time                 Id Command    Argument
2024-11-26T23:45:01.123456Z\t    8 Connect\tapp@localhost on orders using TCP/IP
2024-11-26T23:45:01.124000Z\t    8 Query\tSELECT name FROM customers
WHERE city = 'Lyon'
2024-11-26T23:45:01.125000Z\t    8 Query\tSELECT name FROM customers WHERE city = 'Graz'
2024-11-26T23:45:01.126000Z\t    8 Quit\t
"""

STDERR = """2024-11-26 23:45:01.123 UTC [1234] LOG:  duration: 0.123 ms  statement: SELECT name FROM customers
\tWHERE city = 'Lyon'
2024-11-26 23:45:01.130 UTC [1234] LOG:  duration: 0.050 ms  execute <unnamed>: SELECT name FROM customers WHERE id = $1
2024-11-26 23:45:01.130 UTC [1234] DETAIL:  parameters: $1 = '42'
2024-11-26 23:45:01.140 UTC [1235] LOG:  duration: 0.250 ms  statement: SELECT name FROM customers WHERE city = 'Porto'
"""

CSV = ('2024-11-26 23:45:01.274 UTC,"app","orders",13160,"127.0.0.1:48340",6b08c568.3368,1,"SELECT",2024-11-26 '
       '23:45:01 UTC,3/16,0,LOG,00000,"duration: 2.419 ms  statement: SELECT name FROM customers WHERE city = '
       '\'Lyon\'",,,,,,,,,"","client backend",,0\n'
       '2024-11-26 23:45:01.280 UTC,"app","orders",13160,"127.0.0.1:48340",6b08c568.3368,2,"SELECT",2024-11-26 '
       '23:45:01 UTC,3/16,0,LOG,00000,"duration: 1.000 ms  execute <unnamed>: SELECT name FROM customers WHERE '
       'city = $1","parameters: $1 = \'Porto\'",,,,,,,,"","client backend",,0\n')


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "server.log"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, fmt, statements, sessions", [
    (SLOW, "mysql-slow", 3, {"8", "9"}), (GENERAL, "mysql-general", 2, {"8"}),
    (STDERR, "postgres-stderr", 3, {"1234", "1235"}), (CSV, "postgres-csv", 2, {"6b08c568.3368"}),
])
def test_formats(tmp_path, text, fmt, statements, sessions):
    kind, found = read_log(write(tmp_path, text))
    assert kind == fmt and len(found) == statements and {s.session for s in found} == sessions
    assert all("timestamp=" not in s.text and not s.text.startswith("use ") for s in found)


def test_values_and_durations(tmp_path):
    _, found = read_log(write(tmp_path, STDERR))
    assert found[1].text == "SELECT name FROM customers WHERE id = '42'" and found[1].seconds == pytest.approx(5e-5)
    assert found[0].text == "SELECT name FROM customers\nWHERE city = 'Lyon'"
    _, found = read_log(write(tmp_path, CSV))
    assert found[1].text == "SELECT name FROM customers WHERE city = 'Porto'" and found[1].database == "orders"


def test_grouped_by_normalized_form(tmp_path):
    _, found = read_log(write(tmp_path, SLOW))
    groups = group_logged(found, "mysql", {"customers"}, "orders")
    reads = [g for g in groups.values() if g.kind == "query"]
    assert len(reads) == 1 and reads[0].count == 2 and reads[0].seconds == pytest.approx(0.000608)
    assert reads[0].text == "SELECT name FROM customers WHERE city = 'Lyon'"  # a real call, values as sent
    assert [g.kind for g in groups.values()].count("write") == 1
    assert group_logged(found, "mysql", {"orders"}, "orders") == {}  # statements on tables not captured


@pytest.mark.parametrize("text, words", [("", "is empty"), ("hello\nworld\n", "not a log format")])
def test_refused(tmp_path, text, words):
    with pytest.raises(UsageError, match=words) as info:
        detect(write(tmp_path, text))
    assert info.value.exit_code == 2 and info.value.fix


def test_replay_calls_keep_sessions_order_and_think_times(tmp_path):
    """The calls of a log as the replay runs them: per session in order, the think time since the session's
    previous statement ended (the csvlog's milliseconds), digests by total time, the INSERT's undo."""
    from tdebench.workloads.replay.calls import read_calls

    text = CSV + CSV.replace(",13160,", ",13161,").replace("6b08c568.3368", "6b08c568.3369").replace(
        "SELECT name FROM customers WHERE city = 'Lyon'", "INSERT INTO customers (id, name) VALUES (9, 'Ada')")
    plan = read_calls(write(tmp_path, text), "postgres", {"customers"}, {"customers": ["id"]}, None)
    assert list(plan.sessions) == ["6b08c568.3368", "6b08c568.3369"] and len(plan.calls) == 4
    first, second = plan.sessions["6b08c568.3368"]
    assert first.think == 0 and second.think == pytest.approx(0.279 - (0.271581 + 0.002419), abs=1e-6)
    assert first.digest == second.digest == "d01_customers" and plan.timed
    insert = plan.sessions["6b08c568.3369"][0]
    assert insert.kind == "write" and insert.undo == "DELETE FROM customers WHERE (id = 9)"
    assert not plan.other_writes
