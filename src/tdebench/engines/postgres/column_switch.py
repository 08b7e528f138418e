"""pgcrypto's own way to encrypt existing columns, decrypt them and re-encrypt them under a new key: an ``UPDATE``
of every row, which PostgreSQL's MVCC turns into a second copy of each table until a ``VACUUM``. It cannot run while
the workload serves (the tables change shape and the application's views appear or go), so the ``encrypt``
workload runs it with its background stopped.

Per table with encrypted columns (:class:`~tdebench.engines.postgres.column.EncryptedSchema` decides which):

* **on**: the table is renamed to its base name ``<table>_enc``; a ``bytea`` column is added per encrypted column,
  filled by one ``UPDATE`` with pgcrypto's ciphertext, the plaintext column dropped and the new one renamed; then
  the decrypting view and its triggers are created (as for a table loaded encrypted). Indexes on a dropped column
  go with it (kept to be re-created on the way back);
* **off**: the same backwards (the view dropped, the plaintext column filled from ``decrypt``, the table renamed
  back, the dropped indexes re-created);
* **rekey**: one ``UPDATE`` per table re-encrypting every encrypted column from the old key to a new one.

:class:`PgcryptoSwitcher` is what a column instance's ``switcher()`` returns; the instance keeps ``plain_layout``
(:class:`PgcryptoSwitch`), since its schema, load and canaries follow it.

Stages: ``update`` (the bloat: every row written again, the old versions dead), ``vacuum`` (plain ``VACUUM``: the
dead versions' space reusable, the files hardly smaller), ``vacuum_full`` (``VACUUM FULL``: the tables rewritten,
the space given back). ``DROP COLUMN`` leaves the dropped values in every live row until a rewrite, and plain
``VACUUM`` does not clear the dead rows' bytes: only ``VACUUM FULL`` takes the old plaintext out of the table files
(the WAL written before the switch still holds it until its segments are recycled).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import OfflineSwitcher, Rekeying, Step
from tdebench.api.tables import TableSpec
from tdebench.encryption import EncryptionSpec, SecretKey
from tdebench.errors import RunFailed

_NEW = "__tdebench_new"
OLD_KEY_SETTING = "tdebench.old_key"


class PgcryptoSwitch:
    """Mixin of :class:`~tdebench.engines.postgres.column.PgColumnInstance` (``schema``): ``plain_layout`` is True
    while the workload's tables are plain PostgreSQL tables (from :meth:`PgcryptoSwitcher.start_plain` until the
    switch on)."""

    plain_layout: bool = False
    #: the instance's: CREATE TABLE text -> TableDef (column.parse_create_table)
    parse_table: Callable[[str], Any]

    def register_plain(self, statements: list[str], tables: dict[str, TableSpec]) -> None:
        """Note which columns the switch will encrypt (CREATE TABLE statements run as they are)."""
        for statement in statements:
            table = self.parse_table(statement)
            if table is not None:
                self.schema.add(table, tables.get(table.name))  # type: ignore[attr-defined]


class PgcryptoSwitcher(Rekeying, OfflineSwitcher[Any]):
    """The offline switch of a :class:`~tdebench.engines.postgres.column.PgColumnInstance` (its ``schema``,
    ``cipher``, ``_key``, ``key_setting``, ``pgcluster``, ``connect``)."""

    method = ("pgcrypto (column:*): an UPDATE of every encrypted column into bytea, the decrypting views created, "
              "then VACUUM and VACUUM FULL (no connection meanwhile: the tables change shape)")
    rekey_method = "pgcrypto (column:*): an UPDATE decrypting with the old key and encrypting with a new one"

    def __init__(self, instance: Any) -> None:
        super().__init__(instance)
        self._dropped_indexes: list[str] = []  # indexes on plaintext columns, re-created on the way back

    @classmethod
    def switches(cls, spec: EncryptionSpec) -> bool:
        return spec.mechanism == "column"

    @property
    def schema(self) -> Any:
        return self.instance.schema

    @property
    def plain_layout(self) -> bool:
        """The instance's tables are plain PostgreSQL tables (:class:`PgcryptoSwitch`)."""
        return bool(self.instance.plain_layout)

    @plain_layout.setter
    def plain_layout(self, plain: bool) -> None:
        self.instance.plain_layout = plain

    def start_plain(self) -> dict[str, Any]:
        """The workload's tables are created and loaded as plain tables until :meth:`switch` encrypts them."""
        self.instance.plain_layout, self._dropped_indexes = True, []
        return {"start": "plain tables; pgcrypto and the key ready for the switch"}

    def _managed(self) -> list[str]:
        return [t for t in self.schema.tables if self.schema.managed(t)]

    def _run(self, statements: list[str], autocommit: bool = False) -> None:
        conn = self.instance.connect()
        try:
            conn.autocommit = autocommit
            cur = conn.cursor()
            for sql in statements:
                cur.execute(sql)
            if not autocommit:
                conn.commit()
        finally:
            conn.close()

    def _indexes_on(self, table: str, columns: list[str]) -> list[str]:
        with self.instance.pgcluster.connect(autocommit=True) as conn:
            rows = conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = %s",
                                [table]).fetchall()
        return [r[0] for r in rows if any(f"{c}," in r[0] + "," or f"{c})" in r[0] for c in columns)]

    def _reshape(self, table: str, fill: Callable[[str], str], new_type: Callable[[str], str]) -> list[str]:
        """ADD the new columns, one UPDATE filling them, DROP the old ones, RENAME, NOT NULL where declared."""
        schema, base = self.schema, self.schema.relation(table)
        target = base if self.plain_layout else table
        source = table if self.plain_layout else base
        cols = schema.encrypted[table]
        out = [f"ALTER TABLE {source} " + ", ".join(f"ADD COLUMN {c}{_NEW} {new_type(c)}" for c in cols),
               f"UPDATE {source} SET " + ", ".join(f"{c}{_NEW} = {fill(c)}" for c in cols),
               f"ALTER TABLE {source} " + ", ".join(f"DROP COLUMN {c}" for c in cols)]
        out += [f"ALTER TABLE {source} RENAME COLUMN {c}{_NEW} TO {c}" for c in cols]
        nullable = schema.tables[table].nullable
        out += [f"ALTER TABLE {source} " + ", ".join(f"ALTER COLUMN {c} SET NOT NULL" for c in cols
                                                      if c not in nullable)] if set(cols) - nullable else []
        out.append(f"ALTER TABLE {source} RENAME TO {target}")
        return out

    def _tables(self) -> list[str]:
        schema = self.schema
        return [t if self.plain_layout else schema.relation(t) for t in self._managed()]

    def _table_bytes(self) -> int:
        """The switched tables' size with their TOAST and indexes (the bloat, without the WAL)."""
        with self.instance.pgcluster.connect(autocommit=True) as conn:
            row = conn.execute("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                               "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
                               "AND c.relname = ANY(%s)", [self._tables()]).fetchone()
        return int(row[0])

    def _vacuum(self, step: Step, sizes: dict[str, int]) -> None:
        tables = ", ".join(self._tables())
        sizes["tables_after_update_bytes"] = self._table_bytes()
        step("vacuum")
        self._run([f"VACUUM {tables}"], autocommit=True)
        sizes["tables_after_vacuum_bytes"] = self._table_bytes()
        step("vacuum_full")
        self._run([f"VACUUM FULL {tables}", "CHECKPOINT"], autocommit=True)
        sizes["tables_after_vacuum_full_bytes"] = self._table_bytes()

    def switch(self, on: bool, step: Step) -> dict[str, Any]:
        """Every encrypted column rewritten into pgcrypto's ciphertext (``on``) or back, then both VACUUMs."""
        self._check_layout("on" if on else "off", plain=on)
        sizes = {"tables_before_bytes": self._table_bytes()}
        step("update")
        if on:
            self._encrypt()
        else:
            self._decrypt()
        return self._vacuumed("on" if on else "off", step, sizes)

    def _encrypt(self) -> None:
        schema, cipher = self.schema, self.instance.cipher
        for t in self._managed():
            self._dropped_indexes += self._indexes_on(t, schema.encrypted[t])
            self._run(self._reshape(t, lambda c: cipher.encrypt_sql(f"({c})::text"), lambda c: "BYTEA")
                      + schema.ddl(schema.tables[t])[1:])
        self.plain_layout = False

    def _decrypt(self) -> None:
        schema, cipher = self.schema, self.instance.cipher
        types = {t: dict(schema.tables[t].columns) for t in self._managed()}
        for t in self._managed():
            drops = [f"DROP VIEW IF EXISTS {t} CASCADE", f"DROP FUNCTION IF EXISTS {t}_encrypt_insert() CASCADE",
                     f"DROP FUNCTION IF EXISTS {t}_encrypt_update() CASCADE"]
            self._run(drops + self._reshape(t, lambda c, t=t: f"({cipher.decrypt_sql(c)})::{types[t][c]}",
                                            lambda c, t=t: types[t][c]))
        self.plain_layout = True
        self._run(list(dict.fromkeys(self._dropped_indexes)))
        self._dropped_indexes = []

    def rekey(self, step: Step) -> dict[str, Any]:
        """Every encrypted column re-encrypted under a new key (:meth:`_rekey`), then both VACUUMs."""
        self._check_layout("rekey", plain=False)
        sizes = {"tables_before_bytes": self._table_bytes()}
        self._rekey(step)
        return self._vacuumed("rekey", step, sizes)

    def _check_layout(self, action: str, plain: bool) -> None:
        if self.plain_layout != plain:
            raise RunFailed(f"pgcrypto switch '{action}' asked with the tables "
                            f"{'plain' if self.plain_layout else 'encrypted'}", "a failed trial left them so")

    def _vacuumed(self, action: str, step: Step, sizes: dict[str, int]) -> dict[str, Any]:
        self._vacuum(step, sizes)
        return {"method": f"UPDATE of every encrypted column ({action}), VACUUM, VACUUM FULL", **sizes,
                "tables_count": len(self._managed()),
                "columns_count": sum(len(self.schema.encrypted[t]) for t in self._managed())}

    def _rekey(self, step: Step) -> None:
        """One UPDATE per base table: decrypt with the old key (a session setting), encrypt with the new one."""
        schema, cipher = self.schema, self.instance.cipher
        old, new = self.instance._key, SecretKey.generate(cipher.key_bytes * 8)
        key_setting = self.instance.key_setting
        old_sql = cipher.key_sql().replace(key_setting, OLD_KEY_SETTING)
        step("update")
        conn = self.instance.connect()
        try:
            conn.execute(f"SELECT set_config('{OLD_KEY_SETTING}', %s, false), "
                         f"set_config('{key_setting}', %s, false)", [old.hex(), new.hex()])
            for t in self._managed():
                sets = ", ".join(f"{c} = {cipher.encrypt_sql(cipher.decrypt_sql(c, old_sql))}"
                                 for c in schema.encrypted[t])
                conn.execute(f"UPDATE {schema.relation(t)} SET {sets}")
            conn.commit()
        finally:
            conn.close()
        self.instance._key = new

    def progress(self, on: bool = True) -> SwitchProgress:
        """From the catalog: each encrypted column is ``bytea`` in its base table (on), or has its own type again in
        the table of its own name (off); a sample row must decrypt with the instance's key (on)."""
        schema = self.schema
        wanted = {(schema.relation(t) if on else t, c): "bytea" if on else None
                  for t in self._managed() for c in schema.encrypted[t]}
        with self.instance.pgcluster.connect(autocommit=True) as conn:
            rows = conn.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                                "WHERE table_schema = 'public'").fetchall()
        found = {(t, c): d for t, c, d in rows}
        ok = [k for k, d in wanted.items() if k in found and (found[k] == "bytea") == on]
        pending = tuple(sorted(f"{t}.{c}" for t, c in set(wanted) - set(ok)))
        done = not pending and bool(wanted) and self.plain_layout != on
        if done and on:
            self._sample_decrypts()
        return SwitchProgress(done=done, in_target=len(ok), total=len(wanted), pending=pending[:5],
                              detail={"columns_pending": len(pending)})

    def _sample_decrypts(self) -> None:
        schema, cipher = self.schema, self.instance.cipher
        conn = self.instance.connect()
        try:
            for t in self._managed():
                c = schema.encrypted[t][0]
                conn.execute(f"SELECT {cipher.decrypt_sql(c)} FROM {schema.relation(t)} "
                             f"WHERE {c} IS NOT NULL LIMIT 1").fetchall()
            conn.commit()
        finally:
            conn.close()
