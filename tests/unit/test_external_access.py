"""Before any load: the server is what the URL says and its status is readable; sizes from its own catalog.

Canned catalog rows (no servers); the same checks run against real MariaDB servers in
tests/e2e/test_external_mariadb_by_hand.py.
"""

from __future__ import annotations

import pytest
import sqlglot

from tdebench.engines.toolkit.dbapi import drivers
from tdebench.engines.external.access import Product, check_product, detect_product, grants, preflight, unreadable
from tdebench.engines.toolkit.dbapi.status import source_of
from tdebench.engines.toolkit.dbapi.kinds import KINDS
from tdebench.engines.external.target import parse_target
from tdebench.errors import EnvironmentProblem, UsageError
from tests.unit.test_external_sql_status import FakeConn, FakeCursor

MARIADB = {"VERSION(), @@version_comment": [("10.11.19-MariaDB-0+deb12u1", "Debian 12")],
           "SELECT VERSION()": [("10.11.19-MariaDB-0+deb12u1",)], "CURRENT_USER()": [("bench@%",)]}


def test_product_is_read_from_the_server() -> None:
    assert detect_product("mysql", FakeConn(FakeCursor(MARIADB))) == Product("MariaDB", "10.11.19-MariaDB-0+deb12u1",
                                                                            (10, 11, 19))
    mysql = detect_product("mariadb", FakeConn(FakeCursor({"VERSION()": [("8.4.3", "MySQL Community Server - GPL")]})))
    assert mysql.name == "MySQL" and mysql.number == (8, 4, 3)


def test_mysql_url_on_mariadb_is_refused_with_the_url_to_use() -> None:
    target = parse_target("enc=mysql://bench@db:3307/tpch#tde:aes-256-cbc")
    with pytest.raises(UsageError) as err:
        check_product(target, Product("MariaDB", "10.11.19-MariaDB", (10, 11, 19)))
    text = err.value.one_line()
    assert "this server is MariaDB 10.11.19-MariaDB" in text
    assert "--target 'enc=mariadb://bench@db:3307/tpch#tde:aes-256-cbc'" in text
    with pytest.raises(UsageError, match="use mysql://"):
        check_product(parse_target("p=mariadb://u@h/db"), Product("MySQL", "8.4.3"))
    check_product(target, Product("MySQL", "8.4.3"))  # the right server passes


def test_missing_process_privilege_is_found_before_any_table_exists() -> None:
    denied_views = ("INNODB_SYS_TABLESPACES",)
    conn = FakeConn(FakeCursor(MARIADB, fail=denied_views))
    denied, errors = unreadable("mariadb", conn)
    assert denied == ["information_schema.INNODB_SYS_TABLESPACES + information_schema.INNODB_TABLESPACES_ENCRYPTION"]
    assert "..." not in errors[0] and errors[0].endswith("permission denied for SELECT t.NAME, e.ENC")
    target = parse_target("np=mariadb://bench@db/tpch")
    with pytest.raises(EnvironmentProblem) as err:
        preflight(target, FakeConn(FakeCursor(MARIADB, fail=denied_views)), override=False)
    line = err.value.one_line()
    assert line.count("fix:") == 1 and "GRANT PROCESS ON *.* TO 'bench'@'%'" in line
    facts = preflight(target, FakeConn(FakeCursor(MARIADB, fail=denied_views)), override=True)
    assert facts["status_access"].startswith("not readable") and facts["product"].startswith("MariaDB")
    assert preflight(target, FakeConn(FakeCursor(MARIADB)), override=False)["status_access"] == "readable"


@pytest.mark.parametrize("scheme,denied,product,expected", [
    ("mysql", ["information_schema.INNODB_TABLESPACES", "performance_schema.keyring_component_status"], None,
     ["GRANT PROCESS ON *.* TO L", "GRANT SELECT ON performance_schema.keyring_component_status TO L"]),
    ("mssql", ["sys.dm_database_encryption_keys"], Product("SQL Server", "15.0.2000", (15, 0, 2000)),
     ["GRANT VIEW SERVER STATE TO L  -- in master (2022+: VIEW SERVER SECURITY STATE)"]),
    ("mssql", ["sys.dm_database_encryption_keys"], Product("SQL Server", "16.0.4135", (16, 0, 4135)),
     ["GRANT VIEW SERVER SECURITY STATE TO L  -- SQL Server 2022+, in master"]),
    ("mssql", ["sys.dm_database_encryption_keys"], Product("Azure SQL Database", "12.0", (12, 0)),
     ["GRANT VIEW DATABASE STATE TO L"]),
])
def test_grants_per_scheme(scheme, denied, product, expected) -> None:
    assert grants(scheme, denied, "L", product) == expected


def test_oracle_grant_names_the_catalog_role() -> None:
    assert grants("oracle", ["v$encrypted_tablespaces + v$tablespace"], "BENCH")[0].startswith(
        "GRANT SELECT_CATALOG_ROLE TO BENCH")


def test_status_sources_are_named_whole() -> None:
    assert source_of("SELECT a FROM information_schema.INNODB_SYS_TABLESPACES t LEFT JOIN "
                     "information_schema.INNODB_TABLESPACES_ENCRYPTION e ON e.SPACE = t.SPACE") == \
        "information_schema.INNODB_SYS_TABLESPACES + information_schema.INNODB_TABLESPACES_ENCRYPTION"
    assert source_of("SHOW GLOBAL VARIABLES WHERE x") == "SHOW GLOBAL VARIABLES"


# storage from the target's own catalog ----------------------------------------------------------------------

@pytest.mark.parametrize("scheme,dialect,marker", [
    ("mariadb", "mysql", "information_schema.TABLES"), ("postgresql", "postgres", "pg_table_size"),
    ("mssql", "tsql", "sys.allocation_units"), ("oracle", "oracle", "user_segments"),
])
def test_table_sizes_come_from_the_targets_catalog(scheme: str, dialect: str, marker: str) -> None:
    cur = FakeCursor({marker: [("LINEITEM" if dialect == "oracle" else "lineitem", 60175, 8_000_000, 3_000_000)]})
    sizes = drivers.table_sizes(KINDS[scheme], FakeConn(cur), ["lineitem", "orders"])
    assert sizes == {"lineitem": {"rows": 60175, "table_bytes": 8_000_000, "index_bytes": 3_000_000,
                                  "total_bytes": 11_000_000}}
    sql = next(s for s, _ in cur.executed if marker in s)
    assert "TO_REGCLASS" not in sql.upper() or dialect == "postgres"
    sqlglot.parse_one(sql, read="mysql" if dialect == "mysql" else dialect)
    assert drivers.SIZE_METHODS[drivers.family(KINDS[scheme])]


def test_generic_storage_asks_an_instance_with_its_own_catalog() -> None:
    from tdebench.measure.storage import storage_breakdown, table_sizes

    class Catalogued:
        def catalog_sizes(self, tables):
            return {t: {"rows": 1, "table_bytes": 2, "index_bytes": 3, "total_bytes": 5} for t in tables}

        def storage_breakdown(self):
            return {"tables": self.catalog_sizes(["x"]), "scope": "catalog"}

        def connect(self):  # pragma: no cover - must not be reached
            raise AssertionError("the workload's SQL would be sent to the target")

    assert table_sizes(Catalogued(), ["region"])["region"]["total_bytes"] == 5
    assert storage_breakdown(Catalogued(), None)["scope"] == "catalog"
