"""schema.sql (canonical, PostgreSQL's SQL) and its per-family variants from the captured catalog: CREATE TABLE
statements (parents before the tables that reference them) and, after the load, the indexes."""

from __future__ import annotations

import re

from tdebench.capture.catalog import Table
from tdebench.sqltext.transpile import transpile

_PLAIN = re.compile(r"^[a-z_][a-z0-9_]*$")
_RESERVED = {"order", "group", "user", "table", "select", "from", "where", "limit", "key", "index", "check"}


def ident(name: str) -> str:
    """``name`` as a canonical identifier (double-quoted unless plain lower case and not reserved)."""
    return name if _PLAIN.match(name) and name not in _RESERVED else '"' + name.replace('"', '""') + '"'


def creation_order(tables: list[Table]) -> list[Table]:
    """Tables with every referenced table first (cycles keep their captured order)."""
    by_name = {t.name: t for t in tables}
    out: list[Table] = []
    visiting: set[str] = set()

    def visit(table: Table) -> None:
        if table in out or table.name in visiting:
            return
        visiting.add(table.name)
        for _, parent, _ in table.foreign_keys:
            if parent in by_name and parent != table.name:
                visit(by_name[parent])
        out.append(table)

    for table in tables:
        visit(table)
    return out


def _cols(names: list[str]) -> str:
    return ", ".join(ident(n) for n in names)


def create_table(table: Table, keep_foreign_keys: bool) -> str:
    lines = [f"  {ident(c.name)} {c.type}{'' if c.nullable else ' NOT NULL'}" for c in table.columns]
    if table.primary_key:
        lines.append(f"  PRIMARY KEY ({_cols(table.primary_key)})")
    for columns, parent, parent_columns in table.foreign_keys if keep_foreign_keys else []:
        lines.append(f"  FOREIGN KEY ({_cols(columns)}) REFERENCES {ident(parent)} ({_cols(parent_columns)})")
    return f"CREATE TABLE {ident(table.name)} (\n" + ",\n".join(lines) + "\n)"


def indexes(table: Table, taken: set[str]) -> list[str]:
    out = []
    for name, unique, columns in table.indexes:
        index = name if name.lower() not in taken else f"{table.name}_{name}"
        taken.add(index.lower())
        out.append(f"CREATE {'UNIQUE ' if unique else ''}INDEX {ident(index)} ON {ident(table.name)} "
                   f"({_cols(columns)})")
    return out


def statements(tables: list[Table], keep_foreign_keys: bool) -> tuple[list[str], list[str]]:
    """(CREATE TABLE statements, index statements) in PostgreSQL's SQL."""
    ordered = creation_order(tables)
    taken: set[str] = set()
    return [create_table(t, keep_foreign_keys) for t in ordered], [s for t in ordered for s in indexes(t, taken)]


def schema_text(tables: list[Table], keep_foreign_keys: bool, family: str, header: str) -> str:
    """schema.sql (or a variant) in ``family``'s SQL: the tables, then the indexes (created after the load)."""
    create, after = statements(tables, keep_foreign_keys)
    create = [transpile(s, family) for s in create]  # from PostgreSQL's SQL, in which they are written
    after = [transpile(s, family) for s in after]
    return header + ";\n\n".join(create) + ";\n\n" + "".join(s + ";\n" for s in after)
