"""Before anything is loaded into an external target: is the server what its URL says, and can its status be read?

Run once when tdebench first logs in to a target (before the run starts) and again when its instance starts
(before the schema is created):

* **product**: ``SELECT VERSION(), @@version_comment`` tells MariaDB from MySQL; a ``mysql://`` URL on a MariaDB
  server (or the reverse) is refused with the URL to use, since the two encrypt differently (MySQL: AES-256-CBC
  only; MariaDB: AES-128/192/256, CBC or CTR) and read their status from different tables;
* **privileges**: every status query of the scheme is run once (for tables that do not exist yet); whatever the
  login may not read is refused with the exact ``GRANT`` that fixes it, unless the target's check is overridden.

What each scheme's login needs (docs/engines/external.md):

* MariaDB: ``PROCESS`` (``information_schema.INNODB_SYS_TABLESPACES``, ``INNODB_TABLESPACES_ENCRYPTION``);
* MySQL: ``PROCESS`` (``INNODB_TABLESPACES``) and ``SELECT`` on ``performance_schema.keyring_component_status``;
* PostgreSQL: nothing beyond connecting (``pg_extension``, ``pg_settings``, ``pg_class`` are readable by all);
* SQL Server: ``VIEW SERVER STATE`` (2016-2019) or ``VIEW SERVER SECURITY STATE`` (2022+) for
  ``sys.dm_database_encryption_keys``; Azure SQL Database: ``VIEW DATABASE STATE``;
* Oracle: ``SELECT_CATALOG_ROLE`` (or ``SELECT`` on ``V_$ENCRYPTED_TABLESPACES``, ``V_$TABLESPACE``,
  ``V_$ENCRYPTION_WALLET``, ``V_$VERSION``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tdebench.encryption import redact
from tdebench.engines.toolkit.dbapi.status import PROBES, rollback_quietly
from tdebench.engines.external.target import Target
from tdebench.errors import EnvironmentProblem, UsageError

PROBE_TABLES = ["region"]  # status queries are run for a table name; it need not exist yet


@dataclass(frozen=True)
class Product:
    """What the server says it is: ``MariaDB`` / ``MySQL`` / ..., its version text and number."""

    name: str
    version: str
    number: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.name} {self.version}".strip()


def _one(raw: Any, sql: str) -> tuple[Any, ...] | None:
    cur = raw.cursor()
    try:
        cur.execute(sql)
        row = cur.fetchone()
        return tuple(row) if row else None
    except Exception:  # noqa: BLE001 - a fact we could not read is left out
        rollback_quietly(raw)
        return None


def _number(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g) for g in match.groups() if g is not None) if match else ()


def detect_product(scheme: str, raw: Any) -> Product:
    """The DBMS behind a connection, as the server itself reports it."""
    if scheme in ("mysql", "mariadb"):
        row = _one(raw, "SELECT VERSION(), @@version_comment") or ("", "")
        version, comment = str(row[0] or ""), str(row[1] or "")
        name = "MariaDB" if "mariadb" in f"{version} {comment}".lower() else "MySQL"
        return Product(name, version, _number(version))
    if scheme == "postgresql":
        row = _one(raw, "SHOW server_version") or ("",)
        return Product("PostgreSQL", str(row[0]), _number(str(row[0])))
    if scheme == "mssql":
        row = _one(raw, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(64)), "
                        "CAST(SERVERPROPERTY('EngineEdition') AS INT)") or ("", 0)
        name = "Azure SQL Database" if row[1] in (5, 12) else "SQL Server"
        return Product(name, str(row[0] or ""), _number(str(row[0] or "")))
    row = _one(raw, "SELECT banner FROM v$version WHERE ROWNUM = 1") or ("Oracle",)
    return Product("Oracle", str(row[0]), _number(str(row[0])))


def check_product(target: Target, product: Product) -> None:
    """UsageError when the URL's scheme names another DBMS than the one that answered."""
    expected = {"mysql": "MySQL", "mariadb": "MariaDB"}.get(target.kind.scheme)
    if expected is None or product.name == expected:
        return
    scheme = "mariadb" if product.name == "MariaDB" else "mysql"
    url = target.url.replace(f"{target.kind.scheme}://", f"{scheme}://", 1)
    spec = "" if target.spec.is_plain else f"#{target.spec}"
    raise UsageError(f"target '{target.label}' is a {target.kind.product} URL, but this server is "
                     f"{product.name} {product.version}",
                     f"use {scheme}://: --target '{target.label}={url}{spec}' (and check that the declared "
                     f"encryption is one {product.name} has: `tdebench engines`)")


def account(scheme: str, raw: Any, target: Target) -> str:
    """The login as a GRANT names it, e.g. ``'bench'@'%'`` (MySQL family) or ``[bench]`` (SQL Server)."""
    if scheme in ("mysql", "mariadb"):
        row = _one(raw, "SELECT CURRENT_USER()")
        user, _, host = str(row[0]).rpartition("@") if row and "@" in str(row[0]) else (target.user, "", "%")
        return f"'{user}'@'{host}'"
    if scheme == "mssql":
        row = _one(raw, "SELECT SUSER_SNAME()")
        return f"[{row[0] if row and row[0] else target.user}]"
    if scheme == "oracle":
        row = _one(raw, "SELECT USER FROM dual")
        return str(row[0] if row and row[0] else target.user.upper())
    row = _one(raw, "SELECT current_user")
    return str(row[0] if row and row[0] else target.user)


def grants(scheme: str, denied: list[str], login: str, product: Product | None = None) -> list[str]:
    """The GRANT statements that make ``denied`` status sources readable for ``login``."""
    text = " ".join(denied).lower()
    out: list[str] = []
    if scheme in ("mysql", "mariadb"):
        if "innodb_" in text:
            out.append(f"GRANT PROCESS ON *.* TO {login}")
        if "keyring_component_status" in text:
            out.append(f"GRANT SELECT ON performance_schema.keyring_component_status TO {login}")
    elif scheme == "mssql":
        if product is not None and product.name == "Azure SQL Database":
            out.append(f"GRANT VIEW DATABASE STATE TO {login}")
        elif product is not None and product.number and product.number[0] >= 16:
            out.append(f"GRANT VIEW SERVER SECURITY STATE TO {login}  -- SQL Server 2022+, in master")
        else:
            out.append(f"GRANT VIEW SERVER STATE TO {login}  -- in master (2022+: VIEW SERVER SECURITY STATE)")
    elif scheme == "oracle":
        if "v$" in text:
            out.append(f"GRANT SELECT_CATALOG_ROLE TO {login}  -- as SYS; or GRANT SELECT ON "
                       f"V_$ENCRYPTED_TABLESPACES (and V_$TABLESPACE, V_$ENCRYPTION_WALLET, V_$VERSION) TO {login}")
    return out


def unreadable(scheme: str, raw: Any) -> tuple[list[str], list[str]]:
    """(denied sources, their errors) of every status query of ``scheme``, before and after a load."""
    denied: list[str] = []
    errors: list[str] = []
    for tables in (None, PROBE_TABLES):
        finding = PROBES[scheme](raw, tables)
        denied += [d for d in finding.denied if d not in denied]
        errors += [e for e in finding.errors if e not in errors]
    return denied, errors


def preflight(target: Target, raw: Any, override: bool) -> dict[str, str]:
    """Refuse a wrong scheme (UsageError) and an unreadable status (EnvironmentProblem, unless overridden).

    Returns facts for the manifest: the product and whether the status was readable.
    """
    scheme = target.kind.scheme
    product = detect_product(scheme, raw)
    check_product(target, product)
    denied, errors = unreadable(scheme, raw)
    facts = {"product": str(product)}
    if not denied:
        facts["status_access"] = "readable"
        return facts
    fixes = grants(scheme, denied, account(scheme, raw, target), product)
    what = (f"target '{target.label}': its login cannot read the server's encryption status: "
            + redact("; ".join(errors)))
    if override:
        facts["status_access"] = f"not readable ({'; '.join(denied)}); label kept by --override-encryption-check"
        return facts
    fix = (f"as an administrator run {'; '.join(fixes)}; then start again (checked before any data is loaded)"
           if fixes else f"let the login read {', '.join(denied)} (see docs/engines/external.md, privileges)")
    raise EnvironmentProblem(what, fix)


__all__ = ["Product", "account", "check_product", "detect_product", "grants", "preflight", "unreadable"]
