"""Bulk load of tdebench data files (the ``|``-separated layout of :mod:`tdebench.api.tables`) into DuckDB.

DuckDB's CSV reader takes the files as they are (a ``|`` after the last field included) as long as no field holds
a backslash escape; a file that does is first rewritten as standard CSV next to the database (then removed).
"""

from __future__ import annotations

import os
from pathlib import Path

from tdebench.api.tables import TableSpec, split_line

_TYPES = {"int": "INTEGER", "bigint": "BIGINT", "float": "DOUBLE", "text": "VARCHAR", "char": "VARCHAR",
          "varchar": "VARCHAR", "date": "DATE", "timestamp": "TIMESTAMP", "bool": "BOOLEAN"}
_CHUNK = 1 << 22


def column_type(kind: str, size: tuple[int, ...]) -> str:
    """DuckDB's type for a portable column type (what the CSV reader parses the field as)."""
    if kind == "decimal":
        return f"DECIMAL({size[0]},{size[1] if len(size) > 1 else 0})" if size else "DECIMAL(18,3)"
    return _TYPES[kind]


def has_backslash(path: Path) -> bool:
    """True when the file holds a backslash (an escape DuckDB's CSV reader would not undo)."""
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            if b"\\" in chunk:
                return True
    return False


def as_csv(path: Path, target: Path) -> Path:
    """The data file rewritten as RFC 4180 CSV (NULL as an unquoted ``\\N``, every value quoted)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(path, newline="", encoding="utf-8") as src, open(fd, "w", newline="", encoding="utf-8") as out:
        for line in src:
            fields = split_line(line.rstrip("\n"))
            out.write(",".join("\\N" if f is None else _quoted(f) for f in fields) + "\n")
    return target


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def copy_sql(table: TableSpec, path: Path, escaped: bool) -> str:
    """``INSERT ... SELECT FROM read_csv(...)`` of the file with the table's columns and types."""
    columns = ", ".join(f"'{c.name}': '{column_type(c.kind, c.size)}'" for c in table.columns)
    names = ", ".join(table.column_names)
    text = str(path).replace("'", "''")
    if escaped:
        options = "delim=',', quote='\"', escape='\"', allow_quoted_nulls=false"
    else:
        options = "delim='|', quote='', escape=''"
    return (f"INSERT INTO {table.name} ({names}) SELECT {names} FROM read_csv('{text}', {options}, header=false, "
            f"nullstr='\\N', auto_detect=false, columns={{{columns}}})")
