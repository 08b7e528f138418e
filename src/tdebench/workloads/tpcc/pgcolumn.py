"""UPDATE through PostgreSQL's decrypting views (pgcrypto column encryption).

The postgres engine stores every encrypted column as ``bytea`` in ``<table>_enc`` and shows the table as a
view that decrypts; INSERT goes through an INSTEAD OF INSERT trigger, DELETE works on the simple view.
TPC-C also updates rows, so each view with encrypted columns gets an INSTEAD OF UPDATE trigger that
re-encrypts only the columns whose value changed and writes them by primary key. Transactions lock
rows (SELECT ... FOR UPDATE) before a relative UPDATE, so NEW is computed from the latest value.
"""

from __future__ import annotations

from typing import Any

from tdebench.engines.base import Connection


def column_encryption(instance: Any) -> tuple[Any, Any] | None:
    """(EncryptedSchema, PgCipher) of a pgcrypto column-encrypted instance, else None."""
    enc_schema = getattr(instance, "schema", None)
    cipher = getattr(instance, "cipher", None)
    if enc_schema is None or cipher is None or not hasattr(enc_schema, "managed"):
        return None
    return enc_schema, cipher


def update_trigger_sql(view: str, base: str, columns: list[str], key: tuple[str, ...], encrypted: set[str],
                       encrypt: Any) -> list[str]:
    """CREATE FUNCTION + CREATE TRIGGER making ``view`` updatable (keys are never updated)."""
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


def install_update_triggers(instance: Any, conn: Connection, tables: list[tuple[str, list[str], tuple[str, ...]]]
                            ) -> list[str]:
    """Add UPDATE triggers to the views of ``tables`` (name, columns, primary key); returns the views done."""
    found = column_encryption(instance)
    if found is None:
        return []
    enc_schema, cipher = found
    cur = conn.cursor()
    done = []
    for name, columns, key in tables:
        if not key or not enc_schema.managed(name):
            continue
        cur.execute("SELECT 1 FROM pg_trigger WHERE tgname = %s", [f"{name}_encrypt_update"])
        if cur.fetchone():
            continue  # the engine already makes its views updatable
        for statement in update_trigger_sql(name, enc_schema.relation(name), columns, key,
                                            set(enc_schema.encrypted.get(name, [])), cipher.encrypt_sql):
            cur.execute(statement)
        done.append(name)
    conn.commit()
    return done
