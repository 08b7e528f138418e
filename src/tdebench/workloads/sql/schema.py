"""Table descriptions (:class:`~tdebench.api.tables.TableSpec`) read from a user's ``schema.sql``.

Column types map to the portable kinds of :mod:`tdebench.api.tables`: integers (``INT``, ``SMALLINT``,
``SERIAL`` ...) -> ``int``, ``BIGINT``/``BIGSERIAL`` -> ``bigint``, ``DECIMAL``/``NUMERIC(p,s)`` -> ``decimal``,
``REAL``/``FLOAT``/``DOUBLE`` -> ``float``, ``CHAR(n)``, ``VARCHAR(n)``, ``TEXT`` (and MySQL's ``*TEXT``),
``DATE``, ``TIMESTAMP``/``DATETIME``, ``BOOLEAN``. Keys: inline ``PRIMARY KEY`` and ``REFERENCES``, table-level
``PRIMARY KEY (...)``/``FOREIGN KEY (...)``, and ``ALTER TABLE ... ADD [CONSTRAINT ...] PRIMARY/FOREIGN KEY``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tdebench.api.tables import ColumnSpec, TableSpec
from tdebench.sqltext.statements import Statement
from tdebench.sqltext.tree import exp

_T = exp.DataType.Type
_KINDS: dict[exp.DataType.Type, str] = {
    **dict.fromkeys((_T.INT, _T.SMALLINT, _T.TINYINT, _T.MEDIUMINT, _T.SERIAL, _T.SMALLSERIAL, _T.UINT,
                     _T.USMALLINT, _T.UTINYINT, _T.UMEDIUMINT), "int"),
    **dict.fromkeys((_T.BIGINT, _T.BIGSERIAL, _T.UBIGINT), "bigint"),
    **dict.fromkeys((_T.DECIMAL, _T.BIGDECIMAL), "decimal"),
    **dict.fromkeys((_T.FLOAT, _T.DOUBLE), "float"),
    **dict.fromkeys((_T.CHAR, _T.NCHAR), "char"),
    **dict.fromkeys((_T.VARCHAR, _T.NVARCHAR), "varchar"),
    **dict.fromkeys((_T.TEXT, _T.MEDIUMTEXT, _T.LONGTEXT, _T.TINYTEXT), "text"),
    _T.DATE: "date",
    **dict.fromkeys((_T.TIMESTAMP, _T.DATETIME, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.DATETIME64), "timestamp"),
    _T.BOOLEAN: "bool",
}
SUPPORTED = ("INTEGER/INT/SMALLINT/SERIAL, BIGINT, DECIMAL/NUMERIC(p,s), REAL/FLOAT/DOUBLE, CHAR(n), "
             "VARCHAR(n), TEXT, DATE, TIMESTAMP/DATETIME, BOOLEAN")


class SchemaProblem(ValueError):
    """The schema cannot be turned into table descriptions; ``str()`` says why."""


@dataclass
class SchemaInfo:
    """What schema.sql creates: tables (in order), other relations, and which statements come when."""

    tables: list[TableSpec] = field(default_factory=list)
    views: set[str] = field(default_factory=set)
    #: CREATE TABLE statements (run before the load) and the others (indexes, constraints, views: after it)
    create: list[str] = field(default_factory=list)
    after_load: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tables]


def _column_type(name: str, table: str, kind: exp.DataType) -> str:
    portable = _KINDS.get(kind.this)
    if portable is None:
        raise SchemaProblem(f"column {table}.{name} has type {kind.sql()}, which tdebench cannot load; "
                            f"use one of {SUPPORTED}")
    sizes = [p.sql() for p in kind.expressions]
    if portable in ("char", "varchar", "decimal") and sizes and all(s.isdigit() for s in sizes):
        return f"{portable}({','.join(sizes)})"
    if portable == "timestamp" and sizes and sizes[0].isdigit():
        return f"timestamp({sizes[0]})"
    return portable


def _identifiers(node: exp.Expression) -> list[str]:
    return [i.name.lower() for i in node.expressions if isinstance(i, (exp.Identifier, exp.Column))]


@dataclass
class _Table:
    name: str
    columns: list[ColumnSpec] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)

    def spec(self) -> TableSpec:
        pk = tuple(self.primary_key)
        columns = tuple(ColumnSpec(c.name, c.type, c.nullable and c.name not in pk) for c in self.columns)
        return TableSpec(self.name, columns, pk, tuple(dict.fromkeys(c for c in self.foreign if c not in pk)))


def _create_table(tree: exp.Create) -> _Table:
    schema = tree.this
    target = schema.this if isinstance(schema, exp.Schema) else schema
    table = _Table(target.name.lower())
    if not isinstance(schema, exp.Schema):
        raise SchemaProblem(f"CREATE TABLE {table.name} has no column list (CREATE TABLE ... AS SELECT cannot be "
                            f"loaded); declare its columns")
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            name = item.name.lower()
            kind = item.args.get("kind")
            if not isinstance(kind, exp.DataType):
                raise SchemaProblem(f"column {table.name}.{name} has no type; give it one of {SUPPORTED}")
            constraints = [c.args.get("kind") for c in item.constraints]
            not_null = any(isinstance(c, exp.NotNullColumnConstraint) and not c.args.get("allow_null")
                           for c in constraints)
            if any(isinstance(c, exp.PrimaryKeyColumnConstraint) for c in constraints):
                table.primary_key.append(name)
                not_null = True
            if any(isinstance(c, exp.Reference) for c in constraints):
                table.foreign.append(name)
            table.columns.append(ColumnSpec(name, _column_type(name, table.name, kind), not not_null))
        elif isinstance(item, exp.PrimaryKey):
            table.primary_key.extend(_identifiers(item))
        elif isinstance(item, exp.ForeignKey):
            table.foreign.extend(_identifiers(item))
        elif isinstance(item, exp.Constraint):
            _add_keys(table, item)
    return table


def _add_keys(table: _Table, node: exp.Expression) -> None:
    for key in node.find_all(exp.PrimaryKey):
        table.primary_key.extend(c for c in _identifiers(key) if c not in table.primary_key)
    for key in node.find_all(exp.ForeignKey):
        table.foreign.extend(_identifiers(key))


def read_schema(statements: list[Statement]) -> SchemaInfo:
    """Tables, views and the statement order of a parsed schema file; SchemaProblem for what cannot be loaded."""
    info = SchemaInfo()
    tables: dict[str, _Table] = {}
    for statement in statements:
        tree = statement.tree
        if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "TABLE":
            table = _create_table(tree)
            if table.name in tables:
                raise SchemaProblem(f"table {table.name} is created twice")
            tables[table.name] = table
            info.create.append(statement.text)
            continue
        if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "VIEW":
            info.views.add(tree.this.name.lower() if isinstance(tree.this, exp.Table) else "")
        elif isinstance(tree, exp.Alter):
            name = tree.this.name.lower() if isinstance(tree.this, exp.Table) else ""
            if name in tables:
                for action in tree.args.get("actions") or []:
                    _add_keys(tables[name], action)
        info.after_load.append(statement.text)
    if not tables:
        raise SchemaProblem("it creates no table; add CREATE TABLE statements")
    for table in tables.values():
        names = [c.name for c in table.columns]
        unknown = [c for c in table.primary_key + table.foreign if c not in names]
        if unknown:
            raise SchemaProblem(f"a key of table {table.name} names column {unknown[0]}, which it does not have")
        if len(set(names)) != len(names):
            raise SchemaProblem(f"table {table.name} has two columns with the same name")
    info.tables = [t.spec() for t in tables.values()]
    return info
