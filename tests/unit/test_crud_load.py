"""`--workload load` without servers: options, typed client rows, client batches and drops on SQLite."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tdebench.api.dialect import MARIADB, POSTGRES, SQLITE
from tdebench.encryption import parse_spec
from tdebench.engines import Config, get_engine
from tdebench.errors import UsageError
from tdebench.workloads.load.client import converters, insert_batches, read_rows
from tdebench.workloads.load.options import VARIANTS, parse_options
from tdebench.workloads.tpch import schema


def test_options() -> None:
    assert parse_options({}).variants == list(VARIANTS)
    o = parse_options({"variants": "insert_keys,bulk", "batch_rows": "500"})
    assert o.variants == ["bulk", "insert_keys"] and o.batch_rows == 500
    for raw, word in (({"variants": "copy"}, "variants"), ({"batch_rows": 0}, "batch_rows"),
                      ({"rows": 5}, "unknown load option 'rows'")):
        with pytest.raises(UsageError) as err:
            parse_options(raw)
        assert word in err.value.one_line()


def test_values_are_typed_as_an_application_holds_them(tpch_sf001) -> None:
    path = Path(tpch_sf001[0]) / "orders.tbl"
    row = next(read_rows(path, schema.table("orders"), POSTGRES))
    assert isinstance(row[0], int) and isinstance(row[3], Decimal) and row[4].count("-") == 2
    assert isinstance(next(read_rows(path, schema.table("orders"), SQLITE))[3], float)
    assert len(converters(schema.table("lineitem"), MARIADB)) == len(schema.column_names("lineitem"))


def test_client_batches_then_drop_on_sqlite(tmp_path: Path, tpch_sf001) -> None:
    engine = get_engine("sqlite")
    inst = engine.create_instance(Config("sqlite", parse_spec("none"), engine.default_settings()), tmp_path)
    inst.start()
    try:
        conn = inst.connect()
        inst.create_schema(conn, schema.create_table_sql("sqlite"), schema.TABLES)
        inst.create_constraints(conn, schema.constraint_and_index_sql("sqlite"))
        for table in ("region", "nation", "supplier"):
            rows = insert_batches(conn, SQLITE, schema.table(table), Path(tpch_sf001[0]) / f"{table}.tbl", batch_rows=7)
            assert rows == conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] > 0
        inst.drop_tables(conn, [t.name for t in schema.TABLES])
        left = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        assert left == []
        conn.close()
    finally:
        inst.destroy()
