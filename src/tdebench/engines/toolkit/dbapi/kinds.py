"""The kinds of SQL server tdebench reaches through a Python driver: dialect, driver and the encryption each can
declare (by URL scheme: ``mysql``, ``mariadb``, ``postgresql``, ``mssql``, ``oracle``)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec

from tdebench.api.dialect import Dialect, StorageCatalog
from tdebench.encryption import EncryptionSpec, parse_spec
from tdebench.errors import EnvironmentProblem


def _specs(*texts: str) -> tuple[EncryptionSpec, ...]:
    return tuple(parse_spec(t) for t in texts)


@dataclass(frozen=True)
class Kind:
    """One DBMS reachable by URL: its dialect, driver and the encryption it can declare."""

    scheme: str
    product: str
    dialect: str                      # the SQL dialect the workload is translated to
    module: str                       # Python driver, imported lazily
    pip: str                          # what to pip install when it is missing
    port: int
    specs: tuple[EncryptionSpec, ...]  # declarable besides fs:* (which no server can confirm)


_AES = ("aes-128", "aes-192", "aes-256")
KINDS: dict[str, Kind] = {
    "mysql": Kind("mysql", "MySQL", "mysql", "pymysql", "PyMySQL", 3306, _specs("none", "tde:aes-256-cbc")),
    "mariadb": Kind("mariadb", "MariaDB", "mariadb", "pymysql", "PyMySQL", 3306,
                    _specs("none", *(f"tde:{a}-{m}" for a in _AES for m in ("cbc", "ctr")))),
    "postgresql": Kind("postgresql", "PostgreSQL", "postgres", "psycopg", "psycopg[binary]", 5432,
                       _specs("none", "tde:aes-128-cbc", "tde:aes-256-cbc")),
    "mssql": Kind("mssql", "SQL Server", "tsql", "pymssql", "pymssql", 1433,
                  _specs("none", *(f"tde:{a}" for a in _AES), "tde:3des")),
    "oracle": Kind("oracle", "Oracle", "oracle", "oracledb", "oracledb", 1521,
                   _specs("none", *(f"tde:{a}" for a in _AES), "tde:3des")),
}
_CATALOGS: dict[str, StorageCatalog] = {"mysql": "information_schema", "mariadb": "information_schema",
                                        "postgres": "pg_class"}
_PROTOCOLS = {"pymysql": "mysql", "psycopg": "postgres", "pymssql": "tds", "oracledb": "oracle"}
_LOADS = {"pymysql": "LOAD DATA LOCAL INFILE (batched INSERT when local_infile is off)", "psycopg": "COPY FROM STDIN"}


def kind_dialect(kind: Kind) -> Dialect:
    """What a target of ``kind`` offers a workload: canonical SQL, rewritten for the server's own dialect."""
    return Dialect("postgres", kind.product, _PROTOCOLS[kind.module], "format", translated=True, target=kind.dialect,
                   storage_catalog=_CATALOGS.get(kind.dialect, "none"),
                   bulk_load=_LOADS.get(kind.module, "executemany batches"),
                   explain_prefix="EXPLAIN " if kind.dialect in _CATALOGS else None)  # SQL Server, Oracle: none


def check_driver(kind: Kind) -> None:
    """EnvironmentProblem naming the pip package when the target's driver is not installed."""
    if find_spec(kind.module) is None:
        raise EnvironmentProblem(f"the Python driver for {kind.product} targets ({kind.module}) is not installed",
                                 f"pip install '{kind.pip}'")


MARIADB_HINT = ("a MariaDB server is measured as mariadb://USER@HOST/DB, which declares AES-128/192/256 in CBC or "
                "CTR mode")


def mysql_key_size_reason(spec: EncryptionSpec) -> str:
    """Why MySQL cannot do ``spec`` (empty if it can)."""
    if spec.mechanism != "tde":
        return ""
    if spec.cipher == "3des":
        return ("MySQL InnoDB data-at-rest encryption has no 3DES: it encrypts with AES-256 only (3DES TDE exists "
                "on SQL Server and Oracle: mssql://, oracle://)")
    if spec.key_bits in (128, 192):
        return ("MySQL InnoDB data-at-rest encryption has a single key size: AES-256 (the tablespace key is "
                "AES-256, data is encrypted in CBC mode); AES-128/192 cannot be chosen, so a result labelled "
                f"so would measure AES-256 ({MARIADB_HINT})")
    if spec.mode not in (None, "cbc"):
        return f"MySQL InnoDB encrypts tablespace data with AES-256 in CBC mode only ({MARIADB_HINT})"
    return ""


__all__ = ["KINDS", "MARIADB_HINT", "Kind", "check_driver", "kind_dialect", "mysql_key_size_reason"]
