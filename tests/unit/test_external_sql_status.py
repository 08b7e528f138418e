"""External targets without servers: SQL translation, status probes on canned catalog rows, verdicts, loading."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
import sqlglot

from tdebench.encryption import parse_spec
from tdebench.engines.toolkit.dbapi import drivers
from tdebench.engines.external.engine import evidence_text, tables_text
from tdebench.api.dialect import POSTGRES
from tdebench.engines.toolkit.dbapi.translate import Translator, TranslatingConnection, drop_table_sql
from tdebench.engines.toolkit.dbapi.status import (Finding, evaluate, probe_mssql, probe_mysql_family, probe_oracle)
from tdebench.engines.toolkit.dbapi.kinds import KINDS
from tdebench.workloads.tpch import dialects, params, schema
from tdebench.workloads.tpch.refresh import delete_sql, insert_sql
from tdebench.workloads.tpch.translate import (TpchTranslator, constraint_sql, create_table_sql, recognise_query,
                                               render_for)

TABLES = [t.name for t in schema.TABLES]


# translation ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sf", [0.01, 1, 30])
def test_every_rendered_query_is_recognised_and_rendered_as_script_mode_does(sf):
    for number in params.QUERY_NUMBERS:
        found = recognise_query(params.render_query(number, "postgres", sf))
        assert found is not None and found[0] == number
        for target in ("tsql", "oracle", "mysql"):
            assert render_for(number, found[1], target) == dialects.render_query(number, target, sf)
        assert render_for(number, found[1], "mariadb") == params.render_query(number, "mariadb", sf)


def test_translator_paths():
    tsql, oracle = Translator("tsql", TpchTranslator()), Translator("oracle", TpchTranslator())
    q6 = params.render_query(6, "postgres", 1)
    assert tsql(q6) == dialects.render_query(6, "tsql", 1) and tsql.sources["workload"] == 1
    insert = insert_sql("orders", POSTGRES)
    assert tsql(insert, True) == insert  # pymssql takes %s
    assert oracle(insert, True).endswith(":8, :9)") and "%s" not in oracle(insert, True)
    assert oracle(delete_sql("orders", "o_orderkey", POSTGRES), True) == "DELETE FROM orders WHERE o_orderkey = :1"
    assert "COUNT_BIG(*)" in tsql("SELECT COUNT(*) FROM orders") and tsql.sources["sqlglot"] == 1
    assert Translator("postgres").identity and Translator("postgres")(q6) == q6


@pytest.mark.parametrize("target", ["tsql", "oracle"])
def test_generated_ddl_parses_and_keeps_the_schema(target):
    tables = create_table_sql(target)
    assert len(tables) == 8
    for statement in (*tables, *constraint_sql(target)):
        sqlglot.parse_one(statement, read=target)
        assert "IS NULL THEN" not in statement  # no NULL-ordering emulation in index definitions
    lineitem = tables[-1]
    assert "l_shipdate DATE NOT NULL" in lineitem
    assert ("NUMBER(15, 2)" if target == "oracle" else "NUMERIC(15, 2)") in lineitem
    assert sum("FOREIGN KEY" in s for s in constraint_sql(target)) == 8


def test_mysql_family_uses_the_mariadb_ddl():
    assert create_table_sql("mysql") == tuple(schema.create_table_sql("mariadb"))
    assert "ENGINE=InnoDB" in create_table_sql("mysql")[0]


def test_drop_statements_children_first():
    assert drop_table_sql("mysql", ["region", "lineitem"]) == ["DROP TABLE IF EXISTS lineitem, region"]
    assert drop_table_sql("tsql", ["region", "lineitem"])[0] == "DROP TABLE IF EXISTS lineitem"
    assert "SQLCODE != -942" in drop_table_sql("oracle", ["region"])[0]


class FakeCursor:
    """Canned rows by SQL fragment; records what was executed."""

    def __init__(self, answers: dict[str, list[tuple]] | None = None, fail: tuple[str, ...] = ()) -> None:
        self.answers, self.fail, self.executed, self._rows = answers or {}, fail, [], []
        self.rowcount = 0

    def execute(self, sql, args=None):
        self.executed.append((sql, args))
        if any(f in sql for f in self.fail):
            raise RuntimeError(f"permission denied for {sql[:20]}")
        self._rows = next((rows for key, rows in self.answers.items() if key in sql), [])

    def executemany(self, sql, rows):
        self.executed.append((sql, list(rows)))

    def fetchall(self):
        return self._rows

    def fetchone(self):
        return self._rows[0] if self._rows else None

    def close(self):
        pass


class FakeConn:
    def __init__(self, cursor: FakeCursor) -> None:
        self.cur, self.commits = cursor, 0

    def cursor(self):
        return self.cur

    def commit(self):
        self.commits += 1

    def rollback(self):
        pass

    def close(self):
        pass


def test_translating_connection_hands_translated_sql_to_the_driver():
    raw = FakeConn(FakeCursor())
    conn = TranslatingConnection(raw, Translator("oracle", TpchTranslator()))
    conn.cursor().execute(params.render_query(1, "postgres", 1))
    conn.cursor().executemany(delete_sql("orders", "o_orderkey", POSTGRES), [(1,), (2,)])
    assert raw.cur.executed[0][0] == dialects.render_query(1, "oracle", 1)
    assert raw.cur.executed[1][0].endswith("= :1") and conn.autocommit is False


# probes on canned catalogs -----------------------------------------------------------------------------------

def test_mysql_probe_server_defaults_and_tables():
    base = {"VERSION()": [("8.4.3",)], "keyring_component_status": [("Component_status", "Active")],
            "SHOW GLOBAL VARIABLES": [("default_table_encryption", "ON")], "SCHEMATA": [("NO",)]}
    f = probe_mysql_family(FakeConn(FakeCursor(base)), None)
    assert (f.server, f.state, f.key_bits, f.mode) == ("MySQL 8.4.3", "yes", 256, "cbc")
    rows = [(f"tpch/{t}", "Y" if t != "orders" else "N") for t in TABLES]
    f = probe_mysql_family(FakeConn(FakeCursor({**base, "INNODB_TABLESPACES": rows})), TABLES)
    assert f.state == "partial" and f.tables["orders"] is False
    off = {**base, "SHOW GLOBAL VARIABLES": [("default_table_encryption", "OFF")]}
    f = probe_mysql_family(FakeConn(FakeCursor(off)), None)
    assert f.state == "no" and "DEFAULT ENCRYPTION='Y'" in f.fix


def test_mssql_probe_reads_state_algorithm_and_tempdb():
    rows = [(5, "tpch", 3, "AES", 256, 0.0), (2, "tempdb", 3, "AES", 256, 0.0)]
    f = probe_mssql(FakeConn(FakeCursor({"ProductVersion": [("16.0.4135.4",)], "dm_database_encryption_keys": rows})),
                    TABLES)
    assert (f.state, f.cipher, f.key_bits) == ("yes", "AES", 256) and all(f.tables.values())
    assert f.details["tempdb_encrypted"] and f.details["encryption_state_desc"] == "encrypted"
    assert evaluate(parse_spec("tde:aes-256"), f).state == "confirmed"
    assert evaluate(parse_spec("tde:aes-128"), f).state == "contradicted"
    plain = probe_mssql(FakeConn(FakeCursor({"dm_database_encryption_keys": [(2, "tempdb", 3, "AES", 256, 0)]})), None)
    verdict = evaluate(parse_spec("none"), plain)
    assert plain.state == "no" and verdict.state == "contradicted" and "tempdb" in verdict.reasons[0]
    denied = probe_mssql(FakeConn(FakeCursor(fail=("dm_database_encryption_keys",))), None)
    assert denied.state == "unknown" and "VIEW SERVER STATE" in denied.fix
    assert evaluate(parse_spec("tde:aes-256"), denied).state == "unconfirmed"


def test_mssql_probe_pending_and_3des():
    f = probe_mssql(FakeConn(FakeCursor({"dm_database_encryption_keys": [(5, "tpch", 2, "AES", 256, 40.0)]})), None)
    assert f.state == "pending" and evaluate(parse_spec("tde:aes-256"), f).state == "unconfirmed"
    f = probe_mssql(FakeConn(FakeCursor({"dm_database_encryption_keys": [(5, "tpch", 3, "TRIPLE_DES_3KEY", 192, 0)]})),
                    None)
    assert evaluate(parse_spec("tde:3des"), f).state == "confirmed"
    assert "not AES" in evaluate(parse_spec("tde:aes-192"), f).reasons[0]


def test_oracle_probe_tablespaces_and_algorithm():
    answers = {"v$version": [("Oracle Database 23ai Free",)], "v$encryption_wallet": [("OPEN", "AUTOLOGIN")],
               "user_tablespaces": [("TPCH_ENC", "YES"), ("USERS", "NO")],  # before user_tables: substring match
               "user_tables": [(t.upper(), "TPCH_ENC") for t in TABLES],
               "v$encrypted_tablespaces": [("TPCH_ENC", "AES256")]}
    f = probe_oracle(FakeConn(FakeCursor(answers)), TABLES)
    assert (f.state, f.cipher, f.key_bits) == ("yes", "AES256", 256)
    assert evaluate(parse_spec("tde:aes-256"), f).state == "confirmed"
    assert evaluate(parse_spec("tde:aes-192"), f).state == "contradicted"
    pre = probe_oracle(FakeConn(FakeCursor({**answers, "user_users": [("USERS",)]})), None)
    assert pre.state == "no" and evaluate(parse_spec("none"), pre).state == "confirmed"
    hidden = probe_oracle(FakeConn(FakeCursor(answers, fail=("v$encrypted_tablespaces",))), TABLES)
    assert hidden.state == "yes" and hidden.key_bits is None
    assert "not verified" in " ".join(evaluate(parse_spec("tde:aes-256"), hidden).reasons)


@pytest.mark.parametrize("declared,state,expected", [
    ("none", "no", "confirmed"), ("none", "yes", "contradicted"), ("none", "unknown", "unconfirmed"),
    ("tde:aes-256-cbc", "yes", "confirmed"), ("tde:aes-256-cbc", "no", "contradicted"),
    ("tde:aes-256-cbc", "partial", "contradicted"), ("tde:aes-256-cbc", "pending", "unconfirmed"),
    ("fs:gocryptfs", "no", "unconfirmed"),
])
def test_verdicts(declared, state, expected):
    assert evaluate(parse_spec(declared), Finding("X", state=state, tables={"a": False})).state == expected


def test_mode_mismatch_is_a_contradiction():
    verdict = evaluate(parse_spec("tde:aes-256-ctr"), Finding("MariaDB", state="yes", mode="cbc"))
    assert verdict.state == "contradicted" and "CBC mode, not CTR" in verdict.reasons[0]


def test_status_texts():
    assert tables_text({"a": True, "b": False}) == "1 of 2 encrypted; plain: b"
    assert evidence_text({"plugins": {"fkm": "ACTIVE"}, "variables": {"x": "ON"}, "none": None}) == \
        "plugins.fkm=ACTIVE, x=ON"


# loading ----------------------------------------------------------------------------------------------------

def test_typed_rows_and_batches(tmp_path: Path, monkeypatch):
    path = tmp_path / "orders.tbl"
    path.write_text("1|370|O|172799.49|1996-01-02|5-LOW|Clerk#000000951|0|nstructions sleep|\n" * 3)
    row = next(drivers.typed_rows(schema.table("orders"), path))
    assert row[:5] == [1, 370, "O", Decimal("172799.49"), date(1996, 1, 2)] and len(row) == 9
    monkeypatch.setattr(drivers, "BATCH", 2)
    raw = FakeConn(FakeCursor())
    rows, method = drivers.bulk_load(KINDS["oracle"], raw, schema.table("orders"), path)
    assert rows == 3 and method.startswith("executemany") and raw.commits == 1
    sql, batch = raw.cur.executed[0]
    assert sql.startswith("INSERT INTO orders (o_orderkey") and sql.endswith(":9)") and len(batch) == 2
