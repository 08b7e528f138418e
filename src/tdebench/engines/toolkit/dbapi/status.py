"""What an external server says about its encryption, and whether that matches what its target declares.

Each probe reads the server's own catalog through an open connection (the driver's, not translated) and
returns a :class:`Finding`: ``state`` is ``yes`` (encrypted), ``no``, ``partial`` (some benchmark tables
only), ``pending`` (encryption in progress) or ``unknown`` (the status cannot be read, e.g. privileges).
Without ``tables`` a probe judges what tables created now would get (server/database defaults); with
``tables`` it judges those tables.

* MySQL: keyring (``performance_schema.keyring_component_status``, keyring plugins), ``default_table_encryption``
  and the schema's ``DEFAULT_ENCRYPTION``, then ``INFORMATION_SCHEMA.INNODB_TABLESPACES.ENCRYPTION`` per table.
  InnoDB has one cipher: AES-256 (CBC).
* MariaDB: active ``ENCRYPTION`` plugins, ``innodb_encrypt_tables``, ``file_key_management_encryption_algorithm``,
  then ``INNODB_TABLESPACES_ENCRYPTION`` (scheme 1, key version >= 1) per table. Key lengths are not reported.
* PostgreSQL: ``pg_tde`` (tables using the ``tde_heap`` access method); ``pgcrypto`` is noted (column-level only).
* SQL Server: ``sys.dm_database_encryption_keys`` (state 3 = encrypted, algorithm, key length), tempdb included.
* Oracle: ``USER_TABLESPACES.ENCRYPTED`` for the tablespaces holding the tables, ``V$ENCRYPTED_TABLESPACES``
  (algorithm) and ``V$ENCRYPTION_WALLET``.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from tdebench.encryption import EncryptionSpec, redact

CONFIRMED, CONTRADICTED, UNCONFIRMED = "confirmed", "contradicted", "unconfirmed"
# what the label of a target's results may claim (verification.json ``label_status``; read by tdebench.results.labels)
LABEL_CONFIRMED, LABEL_OVERRIDDEN, LABEL_UNVERIFIABLE = "confirmed", "overridden", "unverifiable"
LABEL_REFUSED = "not confirmed"  # the target is refused: no results carry this label


@dataclass
class Finding:
    """The server's encryption facts as read (``details``) and what they amount to (``state``)."""

    server: str
    state: str = "unknown"                 # yes | no | partial | pending | unknown
    key_bits: int | None = None            # None: not reported by this DBMS
    mode: str | None = None
    cipher: str | None = None              # as the server names it, e.g. "AES", "AES256", "TRIPLE_DES_3KEY"
    tables: dict[str, bool | None] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)  # what could not be read (see access.py)
    fix: str = ""


@dataclass
class Verdict:
    """Declared spec vs finding: ``confirmed``, ``contradicted`` or ``unconfirmed``, with reasons."""

    state: str
    reasons: list[str]
    fix: str = ""
    unverified: list[str] = field(default_factory=list)  # parts of the label the server does not report


_SOURCE = re.compile(r"\b(?:FROM|JOIN)\s+([\w.$]+)", re.I)


def source_of(sql: str) -> str:
    """What a status query reads, e.g. ``information_schema.INNODB_SYS_TABLESPACES`` (or the statement's verb)."""
    names = list(dict.fromkeys(_SOURCE.findall(sql)))
    return " + ".join(names) if names else " ".join(sql.split()[:3])


def _rows(cur: Any, sql: str, finding: Finding) -> list[tuple[Any, ...]] | None:
    """Rows of ``sql``, or None (error noted in the finding, transaction rolled back where needed)."""
    try:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]
    except Exception as exc:  # noqa: BLE001 - missing privileges or views: the status is then unknown
        source = source_of(sql)
        message = redact(str(exc)).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        finding.errors.append(f"{source} could not be read: {message}")
        finding.denied.append(source)
        rollback_quietly(getattr(cur, "connection", None))
        return None


def rows_or_none(cur: Any, sql: str) -> list[tuple[Any, ...]] | None:
    """Rows of ``sql``, or None when it cannot be read (the transaction rolled back where needed)."""
    return _rows(cur, sql, Finding("?"))


def rollback_quietly(conn: Any) -> None:
    """Roll back after a failed read, where the driver has a rollback (an aborted transaction would refuse the
    next statement); an error of the rollback itself is ignored."""
    rollback = getattr(conn, "rollback", None)
    if callable(rollback):
        with contextlib.suppress(Exception):
            rollback()


def _judge(tables: dict[str, bool | None]) -> str:
    values = set(tables.values())
    if not tables or None in values:
        return "unknown"
    return "yes" if values == {True} else "no" if values == {False} else "partial"


# MySQL / MariaDB --------------------------------------------------------------------------------------------

def probe_mysql_family(conn: Any, tables: list[str] | None) -> Finding:
    """MySQL or MariaDB, whichever the server turns out to be."""
    cur = conn.cursor()
    version = (_rows(cur, "SELECT VERSION()", Finding("?")) or [("?",)])[0][0]
    if "mariadb" in str(version).lower():
        return _mariadb(cur, f"MariaDB {version}", tables)
    return _mysql(cur, f"MySQL {version}", tables)


def _variables(cur: Any, where: str, finding: Finding) -> dict[str, str]:
    rows = _rows(cur, f"SHOW GLOBAL VARIABLES WHERE {where}", finding) or []
    return {str(k).lower(): str(v) for k, v in rows}


def _mysql(cur: Any, server: str, tables: list[str] | None) -> Finding:
    f = Finding(server)
    component = dict(_rows(cur, "SELECT STATUS_KEY, STATUS_VALUE FROM performance_schema.keyring_component_status",
                           f) or [])
    plugins = dict(_rows(cur, "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS "
                              "WHERE PLUGIN_NAME LIKE 'keyring%'", f) or [])
    variables = _variables(cur, "Variable_name IN ('default_table_encryption', 'innodb_redo_log_encrypt', "
                                "'innodb_undo_log_encrypt', 'binlog_encryption', 'innodb_temp_tablespace_encrypt', "
                                "'table_encryption_privilege_check')", f)
    schema = _rows(cur, "SELECT DEFAULT_ENCRYPTION FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()", f)
    keyring = str(component.get("Component_status", "")).lower() == "active" or "ACTIVE" in plugins.values()
    default_on = (variables.get("default_table_encryption", "OFF").upper() == "ON"
                  or bool(schema and str(schema[0][0]).upper() in ("YES", "Y")))
    f.details = {"keyring_component": component or None, "keyring_plugins": plugins or None,
                 "variables": variables, "schema_default_encryption": schema[0][0] if schema else None}
    if tables is None:
        f.state = "yes" if keyring and default_on else "no"
        if not keyring:
            f.notes.append("no keyring is active (component_keyring_file or a keyring plugin)")
        elif not default_on:
            f.notes.append("default_table_encryption is OFF and the database's DEFAULT ENCRYPTION is 'N': "
                           "new tables are not encrypted")
            f.fix = "ALTER DATABASE <db> DEFAULT ENCRYPTION='Y' (or SET PERSIST default_table_encryption=ON)"
    else:
        rows = _rows(cur, "SELECT NAME, ENCRYPTION FROM information_schema.INNODB_TABLESPACES "
                          "WHERE NAME LIKE CONCAT(DATABASE(), '/%')", f)
        found = {str(n).split("/", 1)[1].lower(): str(e).upper() == "Y" for n, e in rows or []}
        f.tables = {t: found.get(t.lower()) for t in tables} if rows is not None else dict.fromkeys(tables)
        f.state = _judge(f.tables)
    if f.state == "yes":
        f.key_bits, f.mode, f.cipher = 256, "cbc", "AES-256 (InnoDB)"
    if f.errors and f.state == "no" and tables is None and not (component or plugins or variables):
        f.state = "unknown"
    return f


def _mariadb(cur: Any, server: str, tables: list[str] | None) -> Finding:
    f = Finding(server)
    plugins = dict(_rows(cur, "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS "
                              "WHERE PLUGIN_TYPE = 'ENCRYPTION'", f) or [])
    variables = _variables(cur, "Variable_name LIKE 'innodb_encrypt%' OR Variable_name LIKE '%encryption_algorithm' "
                                "OR Variable_name IN ('innodb_encryption_threads', 'encrypt_tmp_files', "
                                "'encrypt_tmp_disk_tables', 'aria_encrypt_tables', 'encrypt_binlog')", f)
    active = [name for name, status in plugins.items() if str(status).upper() == "ACTIVE"]
    tables_on = variables.get("innodb_encrypt_tables", "OFF").upper() in ("ON", "FORCE")
    f.details = {"encryption_plugins": plugins or None, "variables": variables}
    algorithm = variables.get("file_key_management_encryption_algorithm", "")
    if "file_key_management" in active and algorithm:
        f.mode = algorithm.upper().removeprefix("AES_").lower()
    if tables is None:
        f.state = "yes" if active and tables_on else "no"
        if active and not tables_on:
            f.notes.append("an encryption plugin is active but innodb_encrypt_tables is OFF: new tables are plain")
            f.fix = "SET GLOBAL innodb_encrypt_tables=ON (and innodb_encryption_threads > 0)"
        elif not active:
            f.notes.append("no key management plugin (e.g. file_key_management) is active")
    else:
        rows = _rows(cur, "SELECT t.NAME, e.ENCRYPTION_SCHEME, e.MIN_KEY_VERSION, e.ROTATING_OR_FLUSHING "
                          "FROM information_schema.INNODB_SYS_TABLESPACES t LEFT JOIN "
                          "information_schema.INNODB_TABLESPACES_ENCRYPTION e ON e.SPACE = t.SPACE "
                          "WHERE t.NAME LIKE CONCAT(DATABASE(), '/%')", f)
        found = {str(n).split("/", 1)[1].lower(): (int(s or 0) == 1 and int(k or 0) >= 1, bool(r))
                 for n, s, k, r in rows or []}
        f.tables = {t: found[t.lower()][0] if t.lower() in found else None for t in tables}
        f.state = _judge(f.tables)
        if any(rotating for _, rotating in found.values()):
            f.state = "pending"
    if f.state == "yes":
        f.cipher = f"AES-{f.mode.upper()}" if f.mode else "AES (mode set by the key plugin)"
    return f


# PostgreSQL -------------------------------------------------------------------------------------------------

def probe_postgres(conn: Any, tables: list[str] | None) -> Finding:
    """pg_tde (``tde_heap`` tables); pgcrypto only noted."""
    cur = conn.cursor()
    version = (_rows(cur, "SHOW server_version", Finding("?")) or [("?",)])[0][0]
    f = Finding(f"PostgreSQL {version}")
    extensions = dict(_rows(cur, "SELECT extname, extversion FROM pg_extension", f) or [])
    default_am = (_rows(cur, "SELECT current_setting('default_table_access_method')", f) or [("?",)])[0][0]
    tde_settings = dict(_rows(cur, "SELECT name, setting FROM pg_settings WHERE name LIKE 'pg_tde.%'", f) or [])
    f.details = {"extensions": extensions, "default_table_access_method": default_am,
                 "pg_tde_settings": tde_settings or None}
    if "pgcrypto" in extensions:
        f.notes.append("pgcrypto is installed: it encrypts only values passed through its functions, "
                       "not tables; it does not make this target encrypted")
    if tables is None:
        f.state = "yes" if "pg_tde" in extensions and str(default_am).startswith("tde_heap") else "no"
        if "pg_tde" in extensions and f.state == "no":
            f.fix = "ALTER DATABASE <db> SET default_table_access_method = 'tde_heap'"
    else:
        names = ", ".join(f"'{t}'" for t in tables)
        rows = _rows(cur, "SELECT c.relname, am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam "
                          "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                          f"AND c.relname IN ({names})", f)
        found = {str(n): str(a).startswith("tde_heap") for n, a in rows or []}
        f.tables = {t: found.get(t) for t in tables}
        f.state = _judge(f.tables)
    if f.state == "yes":
        f.cipher = "pg_tde"
        f.notes.append("pg_tde does not report the cipher through SQL")
    return f


# SQL Server -------------------------------------------------------------------------------------------------

_MSSQL_STATES = {0: "no key", 1: "unencrypted", 2: "encryption in progress", 3: "encrypted",
                 4: "key change in progress", 5: "decryption in progress", 6: "protection change in progress"}


def probe_mssql(conn: Any, tables: list[str] | None) -> Finding:
    """``sys.dm_database_encryption_keys`` for this database and tempdb (database-level TDE)."""
    cur = conn.cursor()
    version = (_rows(cur, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(64))", Finding("?"))
               or [("?",)])[0][0]
    f = Finding(f"SQL Server {version}")
    rows = _rows(cur, "SELECT k.database_id, DB_NAME(k.database_id), k.encryption_state, k.key_algorithm, "
                      "k.key_length, k.percent_complete FROM sys.dm_database_encryption_keys k "
                      "WHERE k.database_id IN (DB_ID(), 2)", f)
    if rows is None:
        f.fix = "GRANT VIEW SERVER STATE (SQL Server 2022: VIEW SERVER SECURITY STATE) to the target's login"
        return f
    me = next((r for r in rows if r[0] != 2), None)
    tempdb = next((r for r in rows if r[0] == 2), None)
    state = int(me[2]) if me else 0
    f.details = {"database": me[1] if me else None, "encryption_state": state,
                 "encryption_state_desc": _MSSQL_STATES.get(state, str(state)),
                 "key_algorithm": me[3] if me else None, "key_length": me[4] if me else None,
                 "percent_complete": me[5] if me else None,
                 "tempdb_encryption_state": int(tempdb[2]) if tempdb else 0}
    f.state = {3: "yes", 6: "yes", 2: "pending", 4: "pending"}.get(state, "no")
    if me and state in (2, 3, 4, 6):
        f.cipher = str(me[3])
        f.key_bits = 192 if "DES" in str(me[3]).upper() else int(me[4] or 0) or None
    if tempdb and int(tempdb[2]) == 3:
        f.notes.append("tempdb is encrypted: some database on this instance uses TDE, so every database's "
                       "temporary data (sorts, hash spills) is encrypted")
        f.details["tempdb_encrypted"] = True
    if tables is not None:
        f.tables = {t: f.state == "yes" for t in tables}
    return f


# Oracle -----------------------------------------------------------------------------------------------------

_ORACLE_BITS = {"AES128": 128, "AES192": 192, "AES256": 256, "3DES168": 192, "ARIA128": 128, "ARIA192": 192,
                "ARIA256": 256}


def probe_oracle(conn: Any, tables: list[str] | None) -> Finding:
    """Encrypted tablespaces holding (or about to hold) the benchmark tables."""
    cur = conn.cursor()
    banner = (_rows(cur, "SELECT banner FROM v$version WHERE ROWNUM = 1", Finding("?")) or [("Oracle",)])[0][0]
    f = Finding(str(banner))
    wallet = _rows(cur, "SELECT status, wallet_type FROM v$encryption_wallet", f)
    if tables is None:
        where = _rows(cur, "SELECT default_tablespace FROM user_users", f)
        spaces = {str(r[0]) for r in where or []}
        placed: dict[str, str] = {}
    else:
        names = ", ".join(f"'{t.upper()}'" for t in tables)
        rows = _rows(cur, f"SELECT table_name, tablespace_name FROM user_tables WHERE table_name IN ({names})", f)
        placed = {str(t).lower(): str(s) for t, s in rows or []}
        spaces = set(placed.values())
    flags = dict(_rows(cur, "SELECT tablespace_name, encrypted FROM user_tablespaces", f) or [])
    algorithms = dict(_rows(cur, "SELECT t.name, e.encryptionalg FROM v$encrypted_tablespaces e "
                                 "JOIN v$tablespace t ON t.ts# = e.ts#", f) or [])
    f.details = {"tablespaces": {s: {"encrypted": flags.get(s), "algorithm": algorithms.get(s)} for s in spaces},
                 "wallet": [list(w) for w in wallet] if wallet else None}
    encrypted = {s: (str(flags[s]).upper() == "YES") if s in flags else None for s in spaces}
    if tables is None:
        f.state = _judge(encrypted) if spaces else "unknown"
    else:
        f.tables = {t: encrypted.get(placed[t.lower()]) if t.lower() in placed else None for t in tables}
        f.state = _judge(f.tables)
    algs = {algorithms.get(s) for s in spaces if encrypted.get(s)}
    if f.state == "yes" and len(algs) == 1 and None not in algs:
        f.cipher = str(next(iter(algs)))
        f.key_bits = _ORACLE_BITS.get(f.cipher.upper())
    elif f.state == "yes":
        f.notes.append("algorithm not readable (V$ENCRYPTED_TABLESPACES needs SELECT_CATALOG_ROLE)")
    return f


PROBES = {"mysql": probe_mysql_family, "mariadb": probe_mysql_family, "postgresql": probe_postgres,
          "mssql": probe_mssql, "oracle": probe_oracle}


# verdict ----------------------------------------------------------------------------------------------------

def _cipher_mismatch(spec: EncryptionSpec, f: Finding) -> str:
    if spec.cipher == "3des":
        if f.cipher and "DES" not in f.cipher.upper():
            return f"the server encrypts with {f.cipher}, not 3DES"
        return ""
    if f.cipher and "DES" in f.cipher.upper():
        return f"the server encrypts with {f.cipher}, not AES"
    if f.key_bits is not None and spec.key_bits is not None and f.key_bits != spec.key_bits:
        return f"the server's key is AES-{f.key_bits}, not AES-{spec.key_bits}"
    if f.mode and spec.mode and f.mode != spec.mode:
        return f"the server encrypts in {f.mode.upper()} mode, not {spec.mode.upper()}"
    return ""


def label_status(verdict: Verdict, override: bool) -> tuple[str, str]:
    """(status, note) of a target's label: confirmed, unverifiable (parts not reported), overridden or refused."""
    if verdict.state == CONFIRMED:
        if verdict.unverified:
            return LABEL_UNVERIFIABLE, (f"{' and '.join(verdict.unverified)} not reported by the server: "
                                        "as declared, not verified")
        return LABEL_CONFIRMED, ""
    reason = verdict.reasons[0] if verdict.reasons else verdict.state
    if override:
        return LABEL_OVERRIDDEN, (f"kept by --override-encryption-check although the server's status is "
                                  f"{verdict.state}: {reason}")
    return LABEL_REFUSED, f"{verdict.state}: {reason}"


def evaluate(spec: EncryptionSpec, f: Finding) -> Verdict:
    """Does the server confirm the declared ``spec``?"""
    why = f.notes + f.errors
    if spec.mechanism == "fs":
        return Verdict(UNCONFIRMED, ["filesystem encryption is invisible to SQL: no server can confirm it", *why])
    if f.state == "unknown":
        return Verdict(UNCONFIRMED, ["the server's encryption status could not be read", *why], f.fix)
    if f.state == "partial":
        plain = sorted(t for t, v in f.tables.items() if v is False)
        return Verdict(CONTRADICTED, [f"only some tables are encrypted; plain: {', '.join(plain)}", *why], f.fix)
    if spec.is_plain:
        if f.state in ("yes", "pending"):
            return Verdict(CONTRADICTED, ["declared none, but the server reports encryption", *why],
                           "declare the encryption the server has, or use an unencrypted database")
        if f.details.get("tempdb_encrypted"):
            return Verdict(CONTRADICTED, ["declared none, but tempdb is encrypted (SQL Server's shared tempdb)",
                                          *why], "measure the plain baseline on its own instance")
        return Verdict(CONFIRMED, ["the server reports no encryption", *why])
    if f.state == "pending":
        return Verdict(UNCONFIRMED, ["encryption is still in progress", *why], "wait until it has finished")
    if f.state == "no":
        return Verdict(CONTRADICTED, [f"declared {spec}, but the server reports no encryption", *why], f.fix)
    mismatch = _cipher_mismatch(spec, f)
    if mismatch:
        return Verdict(CONTRADICTED, [mismatch, *why], "declare what the server uses")
    unverified, notes = [], []
    if spec.key_bits and f.key_bits is None and spec.cipher != "3des":
        unverified.append("key length")
        notes.append(f"key length not reported by the server: AES-{spec.key_bits} is as declared, not verified")
    if spec.mode and f.mode is None:
        unverified.append("mode")
        notes.append(f"mode not reported by the server: {spec.mode.upper()} is as declared, not verified")
    return Verdict(CONFIRMED, ["the server reports encryption" + (f" ({f.cipher})" if f.cipher else ""),
                               *notes, *why], unverified=unverified)


__all__ = ["CONFIRMED", "CONTRADICTED", "LABEL_CONFIRMED", "LABEL_OVERRIDDEN", "LABEL_UNVERIFIABLE", "PROBES",
           "UNCONFIRMED", "Finding", "Verdict", "evaluate", "label_status", "source_of"]
