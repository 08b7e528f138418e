"""pgcrypto column encryption for PostgreSQL: ciphers, the cipher safety check, schema, views and loader.

Layout per table with at least one encrypted column:

* ``<table>_enc`` -- the base table. Key columns (primary- and foreign-key columns) keep their type and
  stay plaintext so joins, keys and indexes work; every other column (or the ``encrypt_columns`` list)
  is ``bytea`` holding pgcrypto ciphertext of the value's text form.
* ``<table>`` -- a view that decrypts and casts back to the original types, so queries run unchanged,
  as an application reading through a decryption layer would. DELETE works through it (it is a simple
  view); INSERT goes through an INSTEAD OF trigger that encrypts (refresh functions, COPY into the view).

The key is random per instance, kept in memory and sent on every new connection as the custom setting
``tdebench.key`` (``set_config`` with a bound parameter, so it is in no statement text, log or
pg_stat_statements entry). Views read it once per query through an uncorrelated scalar subquery (an
InitPlan), never per row. It is never stored in a table.

Load: COPY into a TEMP staging table (session-local, not WAL-logged), then ``INSERT ... SELECT`` with the
encryption expressions, then DROP the staging table.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.engine import CANARY_TABLE, DEFAULT_DATABASE, Config, Connection
from tdebench.api.tables import TableSpec
from tdebench.encryption import LEGACY_PGCRYPTO_FIX, LEGACY_PGCRYPTO_REASON, EncryptionSpec, SecretKey
from tdebench.engines.postgres.column_switch import PgcryptoSwitch, PgcryptoSwitcher
from tdebench.engines.postgres.instance import PostgresInstance
from tdebench.engines.toolkit.bulkload import copy_file
from tdebench.errors import EnvironmentProblem, RunFailed, UsageError

KEY_SETTING = "tdebench.key"
DEFAULT_PGP_OPTIONS = "s2k-mode=1"
_PGP_OPTION = re.compile(r"^[a-z0-9-]+=[a-z0-9-]+$")
_SUFFIX = "_enc"


# ciphers -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PgCipher:
    """One pgcrypto cipher: raw ``encrypt()`` (CBC, PKCS padding) or OpenPGP ``pgp_sym_encrypt()``."""

    family: str  # "raw" or "pgp"
    algo: str  # raw: aes, 3des, bf, cast5, des; pgp: aes128, aes192, aes256, 3des, bf, cast5
    key_bytes: int
    pgp_options: str = DEFAULT_PGP_OPTIONS

    LEGACY = frozenset({"bf", "cast5", "des"})  # need OpenSSL's legacy provider

    @classmethod
    def from_spec(cls, spec: EncryptionSpec, pgp_options: str = DEFAULT_PGP_OPTIONS) -> "PgCipher":
        cipher = spec.cipher
        if cipher.startswith("aes-") and spec.mode is None and spec.key_bits:
            return cls("raw", "aes", spec.key_bits // 8)
        if cipher == "3des":
            return cls("raw", "3des", 24)
        if cipher.startswith("pgp-"):
            algo = cipher[4:]
            return cls("pgp", algo, 24 if algo == "3des" else int(algo[3:]) // 8, pgp_options)
        raise UsageError(f"'{spec}' is not a pgcrypto column cipher",
                         "use column:aes-128|192|256, column:3des or column:pgp-aes128|aes192|aes256|3des")

    @property
    def legacy(self) -> bool:
        return self.algo in self.LEGACY

    @property
    def raw_type(self) -> str:
        return f"{self.algo}-cbc/pad:pkcs"

    def key_sql(self) -> str:
        """The session key, read once per query (InitPlan)."""
        if self.family == "raw":
            return f"(SELECT decode(current_setting('{KEY_SETTING}'), 'hex'))"
        return f"(SELECT current_setting('{KEY_SETTING}'))"

    def encrypt_sql(self, text_sql: str, key_sql: str | None = None) -> str:
        key = key_sql or self.key_sql()
        if self.family == "raw":
            return f"encrypt(convert_to({text_sql}, 'UTF8'), {key}, '{self.raw_type}')"
        options = ", ".join(filter(None, [f"cipher-algo={self.algo}", self.pgp_options]))
        return f"pgp_sym_encrypt({text_sql}, {key}, '{options}')"

    def decrypt_sql(self, bytea_sql: str, key_sql: str | None = None) -> str:
        key = key_sql or self.key_sql()
        if self.family == "raw":
            return f"convert_from(decrypt({bytea_sql}, {key}, '{self.raw_type}'), 'UTF8')"
        return f"pgp_sym_decrypt({bytea_sql}, {key})"

    def describe(self) -> str:
        if self.family == "raw":
            name = {"aes": f"AES-{self.key_bytes * 8}", "3des": "3DES (168-bit)"}.get(self.algo, self.algo.upper())
            return f"pgcrypto encrypt(value, key, '{self.raw_type}'): {name}-CBC, PKCS padding, all-zero IV"
        return f"pgcrypto pgp_sym_encrypt(value, password, 'cipher-algo={self.algo}, {self.pgp_options}'): OpenPGP"

    def facts(self) -> dict[str, Any]:
        out: dict[str, Any] = {"function": self.describe(), "key_bits": self.key_bytes * 8}
        if self.family == "raw":
            out["iv"] = "none (all-zero IV): equal values give equal ciphertext"
        else:
            out["iv"] = "random salt and IV per value (OpenPGP)"
            out["pgp_options"] = self.pgp_options
        return out


def legacy_provider_active(conn: Any) -> bool:
    """True if the server's OpenSSL offers Blowfish (only its legacy provider has it)."""
    try:
        with conn.transaction():
            conn.execute("SELECT encrypt('probe'::bytea, '\\x000102030405060708090a0b0c0d0e0f'::bytea, 'bf')")
        return True
    except Exception:  # noqa: BLE001 - "Cipher cannot be initialized": no legacy provider
        return False


def cipher_safety_check(conn: Any, cipher: PgCipher, *, require_legacy_provider: bool = True) -> dict[str, Any]:
    """Encrypt a marker with the session key and prove the result is ciphertext.

    Refuses legacy ciphers (bf, cast5, des) unless OpenSSL's legacy provider is active: without it,
    PostgreSQL before 15.19/16.15/17.11/18.6 stores ``pgp_sym_encrypt(..., 'cipher-algo=bf')`` as
    plaintext (CVE-2026-14663). Then checks that no 16-byte piece of the marker survives in the
    ciphertext, that it decrypts back, and that a wrong key does not decrypt it. Raises
    EnvironmentProblem on any failure; returns the facts for the encryption status.
    """
    result: dict[str, Any] = {"cipher": cipher.describe()}
    if cipher.legacy:
        active = legacy_provider_active(conn)
        result["openssl_legacy_provider"] = active
        if require_legacy_provider and not active:
            raise EnvironmentProblem(
                f"refusing pgcrypto cipher '{cipher.algo}': OpenSSL's legacy provider is not active in this server; "
                f"{LEGACY_PGCRYPTO_REASON}", LEGACY_PGCRYPTO_FIX)
    marker = f"TDEBENCH-CIPHER-CHECK-{secrets.token_hex(8)}-" * 4
    with conn.transaction():
        ciphertext = bytes(conn.execute(f"SELECT {cipher.encrypt_sql('%s::text')}", [marker]).fetchone()[0])
        decrypted = conn.execute(f"SELECT {cipher.decrypt_sql('%s::bytea')}", [ciphertext]).fetchone()[0]
    raw = marker.encode()
    leaked = [i for i in range(0, len(raw) - 15) if raw[i:i + 16] in ciphertext]
    wrong_key_rejected = _wrong_key_rejected(conn, cipher, ciphertext, marker)
    result.update(marker_bytes=len(raw), ciphertext_bytes=len(ciphertext), plaintext_in_ciphertext=bool(leaked),
                  roundtrip=decrypted == marker, wrong_key_rejected=wrong_key_rejected)
    result["passed"] = not leaked and decrypted == marker and wrong_key_rejected
    if not result["passed"]:
        what = ("the ciphertext contains the plaintext" if leaked else
                "the value does not decrypt back" if decrypted != marker else "a wrong key decrypts the value")
        raise EnvironmentProblem(f"pgcrypto cipher check failed for {cipher.describe()}: {what}",
                                 "do not measure this cipher here: it does not encrypt; use AES")
    return result


def _wrong_key_rejected(conn: Any, cipher: PgCipher, ciphertext: bytes, marker: str) -> bool:
    wrong = secrets.token_hex(cipher.key_bytes)
    key_sql = "decode(%s, 'hex')" if cipher.family == "raw" else "%s::text"
    try:
        with conn.transaction():
            sql = f"SELECT {cipher.decrypt_sql('%s::bytea', key_sql)}"
            value = conn.execute(sql, [ciphertext, wrong]).fetchone()[0]
    except Exception:  # noqa: BLE001 - the expected outcome: wrong key or corrupt data
        return True
    return value != marker


# encrypted columns -------------------------------------------------------------------------------------
def validate_column_options(settings: dict[str, str]) -> None:
    """UsageError for a bad ``encrypt_columns`` or ``pgp_options`` setting."""
    if "encrypt_columns" in settings:
        parse_encrypt_columns(settings["encrypt_columns"])
    options = settings.get("pgp_options", DEFAULT_PGP_OPTIONS)
    for item in filter(None, (p.strip() for p in options.split(","))):
        if not _PGP_OPTION.match(item) or item.startswith("cipher-algo"):
            raise UsageError(f"bad pgp_options item '{item}'",
                             "give pgcrypto options such as s2k-mode=3,s2k-count=65536 (the spec sets cipher-algo)")


def parse_encrypt_columns(text: str) -> dict[str, set[str]]:
    """``table.col,table.*,...`` -> {table: {col, ...}} (``*`` = every non-key column; ``{"*"}`` kept).
    Only the syntax is checked here; the tables and columns are checked against the workload's tables by
    :func:`check_encrypt_columns` before any work starts."""
    out: dict[str, set[str]] = {}
    for item in filter(None, (p.strip().lower() for p in text.split(","))):
        table, dot, column = item.partition(".")
        if not dot or not re.match(r"^\w+$", table) or not re.match(r"^(\w+|\*)$", column):
            raise UsageError(f"bad encrypt_columns item '{item}'",
                             "write table.column or table.*, e.g. lineitem.l_comment")
        out.setdefault(table, set()).add(column)
    return out


def check_encrypt_columns(text: str, tables: Sequence[TableSpec]) -> None:
    """UsageError for an ``encrypt_columns`` item that names no column of the workload's tables, or a key."""
    by_name = {t.name: t for t in tables}
    for table, columns in parse_encrypt_columns(text).items():
        spec = by_name.get(table)
        if spec is None:
            raise UsageError(f"encrypt_columns names table {table}, which the workload does not create",
                             f"its tables: {', '.join(by_name) or '(none)'}")
        for column in sorted(columns - {"*"}):
            if column not in spec.column_names:
                raise UsageError(f"table {table} has no column {column}",
                                 f"columns of {table}: {', '.join(spec.column_names)}")
            if column in spec.key_columns:
                raise UsageError(f"{table}.{column} is a key column and stays plaintext so joins and keys work",
                                 f"encrypt non-key columns only; keys of {table}: {', '.join(sorted(spec.key_columns))}")


def update_trigger_sql(view: str, base: str, columns: list[str], key: tuple[str, ...], encrypted: set[str],
                       encrypt: Any) -> list[str]:
    """CREATE FUNCTION + CREATE TRIGGER making ``view`` updatable: only changed encrypted columns are encrypted
    again, rows are found by ``key`` (never updated). A workload that updates rows (TPC-C) locks them first
    (SELECT ... FOR UPDATE), so NEW is computed from the latest value."""
    sets = []
    for c in columns:
        if c in key:
            continue
        if c in encrypted:
            sets.append(f"{c} = CASE WHEN NEW.{c} IS DISTINCT FROM OLD.{c} THEN {encrypt(f'(NEW.{c})::text')} "
                        f"ELSE {c} END")
        else:
            sets.append(f"{c} = NEW.{c}")
    where = " AND ".join(f"{k} = OLD.{k}" for k in key)
    function = (f"CREATE OR REPLACE FUNCTION {view}_encrypt_update() RETURNS trigger LANGUAGE plpgsql AS $fn$\n"
                f"BEGIN\n  UPDATE {base} SET {', '.join(sets)} WHERE {where};\n  RETURN NEW;\nEND\n$fn$")
    trigger = (f"CREATE TRIGGER {view}_encrypt_update INSTEAD OF UPDATE ON {view} "
               f"FOR EACH ROW EXECUTE FUNCTION {view}_encrypt_update()")
    return [function, trigger]


@dataclass
class TableDef:
    """A CREATE TABLE statement taken apart: column names and types, table-level clauses, options."""

    name: str
    columns: list[tuple[str, str]]
    clauses: list[str] = field(default_factory=list)
    inline_keys: set[str] = field(default_factory=set)
    suffix: str = ""
    primary_key: tuple[str, ...] = ()  # rows of the view are updated by this key (none: not updatable)
    nullable: set[str] = field(default_factory=set)  # columns declared without NOT NULL (the others are NOT NULL)


_CREATE = re.compile(r"^\s*CREATE\s+TABLE\s+(\w+)\s*\((.*)\)\s*([^()]*)$", re.I | re.S)
_CLAUSE = re.compile(r"^(PRIMARY\s+KEY|UNIQUE|CONSTRAINT|FOREIGN\s+KEY|CHECK)\b", re.I)
_COLUMN = re.compile(r"^(\w+)\s+(.+?)(\s+(NOT\s+NULL|NULL|PRIMARY\s+KEY|UNIQUE|DEFAULT|REFERENCES|CHECK)\b.*)?$",
                     re.I | re.S)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        depth += (char == "(") - (char == ")")
        current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def parse_create_table(sql: str) -> TableDef | None:
    """The table definition in ``sql``, or None if it is not a plain CREATE TABLE."""
    match = _CREATE.match(sql)
    if not match:
        return None
    table = TableDef(match.group(1).lower(), [], suffix=match.group(3).strip())
    for part in _split_top_level(match.group(2)):
        if _CLAUSE.match(part):
            table.clauses.append(part)
            if re.match(r"^(PRIMARY\s+KEY|FOREIGN\s+KEY|CONSTRAINT)", part, re.I):
                cols = re.search(r"\(([^)]*)\)", part)
                table.inline_keys |= {c.strip().lower() for c in cols.group(1).split(",")} if cols else set()
            continue
        col = _COLUMN.match(part)
        if not col:
            return None
        name, tail = col.group(1).lower(), col.group(3) or ""
        table.columns.append((name, col.group(2).strip()))
        if re.search(r"PRIMARY\s+KEY|REFERENCES", tail, re.I):
            table.inline_keys.add(name)
        if not re.search(r"NOT\s+NULL|PRIMARY\s+KEY", tail, re.I):
            table.nullable.add(name)
        # inline keys become table clauses: the column definitions are rewritten, the keys must stay
        if re.search(r"PRIMARY\s+KEY", tail, re.I):
            table.clauses.append(f"PRIMARY KEY ({name})")
        ref = re.search(r"REFERENCES\s+(\w+)\s*(\([^)]*\))?", tail, re.I)
        if ref:
            table.clauses.append(f"FOREIGN KEY ({name}) REFERENCES {ref.group(1)}" + (f" {ref.group(2)}" if ref.group(2) else ""))
    return table


class EncryptedSchema:
    """Which columns are encrypted, and the SQL for base tables, views, triggers, load and constraints."""

    def __init__(self, cipher: PgCipher, selection: dict[str, set[str]] | None) -> None:
        self.cipher = cipher
        self.selection = selection  # None: every non-key column of every table
        self.tables: dict[str, TableDef] = {}
        self.encrypted: dict[str, list[str]] = {}
        self.plaintext: dict[str, list[str]] = {}
        self.skipped: list[str] = []

    def add(self, table: TableDef, spec: TableSpec | None = None) -> None:
        """Decide which columns of ``table`` are encrypted: every non-key column (``spec`` names the keys; keys
        declared in the statement count too), or those ``encrypt_columns`` selects."""
        keys = table.inline_keys | (spec.key_columns if spec is not None else set())
        table.primary_key = spec.primary_key if spec is not None else ()
        names = [c for c, _ in table.columns]
        if self.selection is None:
            wanted = set(names) - keys
        else:
            chosen = self.selection.get(table.name, set())
            wanted = (set(names) - keys) if "*" in chosen else chosen
            unknown = wanted - set(names)
            if unknown:
                raise UsageError(f"encrypt_columns names {', '.join(sorted(unknown))}, not columns of {table.name}",
                                 f"columns of {table.name}: {', '.join(names)}")
        self.tables[table.name] = table
        self.encrypted[table.name] = [c for c in names if c in wanted]
        self.plaintext[table.name] = [c for c in names if c not in wanted]

    def managed(self, table: str) -> bool:
        return bool(self.encrypted.get(table))

    def relation(self, table: str) -> str:
        return table + _SUFFIX if self.managed(table) else table

    def ddl(self, table: TableDef) -> list[str]:
        """Base table, decrypting view, INSERT trigger (or the original table if nothing is encrypted)."""
        enc = set(self.encrypted[table.name])
        defs = [f"  {c} {'BYTEA' if c in enc else t}{'' if c in table.nullable else ' NOT NULL'}"
                for c, t in table.columns] + [f"  {self._references(c)}" for c in table.clauses]
        base = self.relation(table.name)
        create = f"CREATE TABLE {base} (\n" + ",\n".join(defs) + "\n)" + (f" {table.suffix}" if table.suffix else "")
        if not enc:
            return [create]
        select = ",\n".join(f"  ({self.cipher.decrypt_sql(c)})::{t} AS {c}" if c in enc else f"  {c}"
                            for c, t in table.columns)
        view = f"CREATE VIEW {table.name} AS SELECT\n{select}\nFROM {base}"
        cols = ", ".join(c for c, _ in table.columns)
        values = ", ".join(self.encrypt_expr(f"NEW.{c}", c, enc) for c, _ in table.columns)
        function = (f"CREATE FUNCTION {table.name}_encrypt_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$\n"
                    f"BEGIN\n  INSERT INTO {base} ({cols}) VALUES ({values});\n  RETURN NEW;\nEND\n$fn$")
        trigger = (f"CREATE TRIGGER {table.name}_encrypt_insert INSTEAD OF INSERT ON {table.name} "
                   f"FOR EACH ROW EXECUTE FUNCTION {table.name}_encrypt_insert()")
        update = (update_trigger_sql(table.name, base, [c for c, _ in table.columns], table.primary_key, enc,
                                     self.cipher.encrypt_sql) if table.primary_key else [])
        return [create, view, function, trigger, *update]

    def _references(self, clause: str) -> str:
        """A table clause whose REFERENCES names the base table of a table created here (views have no keys)."""
        def swap(match: re.Match[str]) -> str:
            name = match.group(2).lower()
            return f"{match.group(1)}{self.relation(name)}" if self.managed(name) else match.group(0)

        return re.sub(r"(\bREFERENCES\s+)(\w+)", swap, clause, flags=re.I)

    def encrypt_expr(self, source: str, column: str, enc: set[str]) -> str:
        return self.cipher.encrypt_sql(f"({source})::text") if column in enc else source

    def staging_ddl(self, table: str) -> tuple[str, str]:
        """(staging table name, its CREATE TEMP TABLE) with the original column types."""
        t = self.tables[table]
        stage = f"{table}_stage"
        cols = ", ".join(f"{c} {typ}" for c, typ in t.columns)
        return stage, f"CREATE TEMP TABLE {stage} ({cols})"

    def insert_select(self, table: str, stage: str) -> str:
        t = self.tables[table]
        enc = set(self.encrypted[table])
        cols = ", ".join(c for c, _ in t.columns)
        exprs = ", ".join(self.encrypt_expr(c, c, enc) for c, _ in t.columns)
        return f"INSERT INTO {self.relation(table)} ({cols}) SELECT {exprs} FROM pg_temp.{stage}"

    def rewrite(self, statement: str) -> str | None:
        """A key/index statement aimed at base tables; None if it involves an encrypted column."""
        encrypted = {c for cols in self.encrypted.values() for c in cols}
        for group in re.findall(r"\(([^()]*)\)", statement):
            if {c.strip().lower() for c in group.split(",")} & encrypted:
                self.skipped.append(statement)
                return None

        def swap(match: re.Match[str]) -> str:
            name = match.group(2)
            return f"{match.group(1)}{self.relation(name.lower())}" if self.managed(name.lower()) else match.group(0)

        return re.sub(r"(\b(?:ALTER\s+TABLE|ON|REFERENCES)\s+)(\w+)", swap, statement, flags=re.I)


# the instance ------------------------------------------------------------------------------------------
class PgColumnInstance(PgcryptoSwitch, PostgresInstance):
    """A cluster whose workload tables keep their non-key columns as pgcrypto ciphertext."""

    extensions = ("pgcrypto",)
    parse_table = staticmethod(parse_create_table)
    key_setting = KEY_SETTING

    def __init__(self, config: Config, workdir: Path, bindir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, bindir, database)
        settings = config.settings
        self.cipher = PgCipher.from_spec(config.spec, settings.get("pgp_options", DEFAULT_PGP_OPTIONS))
        selection = parse_encrypt_columns(settings["encrypt_columns"]) if settings.get("encrypt_columns") else None
        self.schema = EncryptedSchema(self.cipher, selection)
        self._key = SecretKey.generate(self.cipher.key_bytes * 8)
        self.cipher_check: dict[str, Any] = {}
        self._switcher = PgcryptoSwitcher(self)  # column: specs switch by pgcrypto's UPDATE (column_switch.py)

    def after_start(self) -> None:
        conn = self.connect()
        try:
            self.cipher_check = cipher_safety_check(conn, self.cipher)
        finally:
            conn.close()

    def connect(self) -> Connection:
        conn = super().connect()
        try:  # a bound parameter: the key is in no statement text, log line or pg_stat_statements entry
            key = self.key_access.fetch(1) if self.key_access is not None else self._key  # fetched by the session
            conn.execute(f"SELECT set_config('{KEY_SETTING}', %s, false)",  # type: ignore[attr-defined]
                         [key.hex()])
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    # schema and load ---------------------------------------------------------------------------------
    def create_schema(self, conn: Connection, statements: Sequence[str], tables: Sequence[TableSpec] = ()) -> None:
        """Base tables, decrypting views and INSERT/UPDATE triggers in place of each CREATE TABLE."""
        self.tables.update({t.name: t for t in tables})
        if self.plain_layout:  # the encrypt workload: plain until the switch (column_switch.py)
            self.register_plain(list(statements), self.tables)
            self.execute_all(conn, statements)
            return
        out: list[str] = []
        for statement in statements:
            table = parse_create_table(statement)
            if table is None:
                out.append(statement)
                continue
            self.schema.add(table, self.tables.get(table.name))
            out += self.schema.ddl(table)
        self.execute_all(conn, out)

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        if self.plain_layout or not self.schema.managed(table.name):
            return super().bulk_load(conn, table, path)
        stage, ddl = self.schema.staging_ddl(table.name)
        cur = conn.cursor()
        cur.execute(ddl)
        copy_file(conn, stage, table.column_names, path)
        cur.execute(self.schema.insert_select(table.name, stage))
        rows = cur.rowcount
        cur.execute(f"DROP TABLE pg_temp.{stage}")
        conn.commit()
        return rows

    def drop_tables(self, conn: Connection, tables: Sequence[str]) -> None:
        """Views, their base tables and trigger functions (CASCADE takes the triggers)."""
        cur = conn.cursor()
        for name in reversed(tables):
            if self.schema.managed(name) and not self.plain_layout:
                cur.execute(f"DROP VIEW IF EXISTS {name} CASCADE")
                cur.execute(f"DROP FUNCTION IF EXISTS {name}_encrypt_insert() CASCADE")
                cur.execute(f"DROP FUNCTION IF EXISTS {name}_encrypt_update() CASCADE")
            cur.execute(f"DROP TABLE IF EXISTS {self.relation_name(name)} CASCADE")
        conn.commit()

    def create_constraints(self, conn: Connection, statements: Sequence[str]) -> None:
        if self.plain_layout:
            return self.execute_all(conn, statements)
        kept = [s for s in (self.schema.rewrite(st) for st in statements) if s is not None]
        self.execute_all(conn, kept)

    def plant_canaries(self, markers: list[str]) -> None:
        """Canaries go into an encrypted column, like the workload's data (plain tables: a plain column, which the
        switch encrypts with the rest)."""
        if self.plain_layout:
            PostgresInstance.plant_canaries(self, markers)
            if self.schema.selection is not None:  # encrypt_columns names workload columns; canaries always
                self.schema.selection[CANARY_TABLE] = {"marker"}
            self.register_plain([f"CREATE TABLE {CANARY_TABLE} (id INTEGER PRIMARY KEY, marker VARCHAR(64) NOT NULL)"],
                                {})
            return
        base = CANARY_TABLE + _SUFFIX
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"CREATE TABLE IF NOT EXISTS {base} (id INTEGER PRIMARY KEY, marker BYTEA NOT NULL)")
            cur.execute(f"CREATE OR REPLACE VIEW {CANARY_TABLE} AS SELECT id, "
                        f"({self.cipher.decrypt_sql('marker')})::VARCHAR(64) AS marker FROM {base}")
            cur.execute(f"SELECT coalesce(max(id), 0) FROM {base}")
            first = cur.fetchone()[0] + 1
            for i, marker in enumerate(markers, start=first):
                cur.execute(f"INSERT INTO {base} (id, marker) VALUES (%s, {self.cipher.encrypt_sql('%s::text')})",
                            [i, marker])
            conn.commit()
        finally:
            conn.close()

    # facts -------------------------------------------------------------------------------------------
    def relation_name(self, table: str) -> str:
        return table if self.plain_layout else self.schema.relation(table)

    def settings(self) -> dict[str, Any]:
        out = super().settings()
        out["column_encryption"] = {
            **self.cipher.facts(),
            "encrypt_columns": self.config.settings.get("encrypt_columns", "every non-key column"),
            "key_delivery": f"per session: set_config('{KEY_SETTING}', $1) with a bound parameter",
            "load": "COPY into a TEMP staging table, then INSERT ... SELECT encrypting",
            "updatable_views": sorted(t.name for t in self.schema.tables.values()
                                      if t.primary_key and self.schema.managed(t.name)),
            "update_path": "INSTEAD OF UPDATE triggers re-encrypting only the changed columns, rows found by "
                           "primary key",
        }
        return out

    def _column_types(self) -> dict[tuple[str, str], str]:
        bases = [self.schema.relation(t) for t in self.schema.encrypted if self.schema.managed(t)]
        with self.pgcluster.connect(autocommit=True) as conn:
            rows = conn.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                                "WHERE table_schema = 'public' AND table_name = ANY(%s)", [bases]).fetchall()
        return {(t, c): d for t, c, d in rows}

    def encryption_status(self) -> dict[str, Any]:
        with self.pgcluster.connect(autocommit=True) as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'pgcrypto'").fetchone()
        types = self._column_types()
        wrong = [f"{t}.{c}" for t, cols in self.schema.encrypted.items() for c in cols
                 if types.get((self.schema.relation(t), c)) != "bytea"]
        return {
            "enabled": bool(row) and bool(self.cipher_check.get("passed")) and not wrong and not self.plain_layout,
            "mechanism": "pgcrypto column encryption",
            "pgcrypto_version": row[0] if row else None,
            **self.cipher.facts(),
            "encrypted_columns": {t: c for t, c in self.schema.encrypted.items() if c},
            "plaintext_columns": {t: c for t, c in self.schema.plaintext.items() if c},
            "plaintext_reason": "key columns (primary and foreign keys) stay plaintext so joins and keys work",
            "not_bytea": wrong,
            "skipped_statements": list(self.schema.skipped),
            "cipher_check": dict(self.cipher_check),
            "not_covered": "plaintext key columns and their indexes; decrypted values in sort/hash temp files "
                           "during queries; the staging table during the load",
        }

    def check_encrypted(self, schema_tables: list[str]) -> None:
        status = self.encryption_status()
        if not status["enabled"]:
            raise RunFailed(f"{self.config.label}: column encryption is not in effect "
                            f"(pgcrypto {status['pgcrypto_version']}, not bytea: {status['not_bytea']})",
                            "look at the instance's schema; every encrypted column must be bytea")
        conn = self.connect()
        try:
            cipher_safety_check(conn, self.cipher)
            for table in schema_tables:
                self._check_sample(conn, table)
        finally:
            conn.close()

    def _check_sample(self, conn: Any, table: str) -> None:
        """One stored row of ``table``: no encrypted value's plaintext appears in its ciphertext."""
        cols = self.schema.encrypted.get(table) or []
        if not cols:
            return
        exprs = ", ".join(f"{c}, {self.cipher.decrypt_sql(c)}" for c in cols)
        row = conn.execute(f"SELECT {exprs} FROM {self.schema.relation(table)} LIMIT 1").fetchone()
        conn.commit()
        for i in range(0, len(row or ()), 2):
            if row[i] is None:  # a NULL is stored as NULL: nothing to check
                continue
            stored, plain = bytes(row[i]), str(row[i + 1]).encode()
            if len(plain) >= 6 and plain in stored:
                raise RunFailed(f"{self.config.label}: {table}.{cols[i // 2]} holds its plaintext",
                                "pgcrypto did not encrypt; do not use this cipher")
