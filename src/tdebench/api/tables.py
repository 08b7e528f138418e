"""Tables as data: what a workload hands an engine to create, load and size its tables.

A :class:`TableSpec` names the columns with portable types; an engine turns them into its own column types and
converts the values of a data file when its load path needs that (SQLite).

Data files (:func:`Instance.bulk_load <tdebench.api.engine.Instance.bulk_load>`) are text, one row per line,
fields separated by ``|`` with a ``|`` after the last field (the TPC-H ``.tbl`` layout), with backslash escapes as
PostgreSQL's ``COPY ... (FORMAT text)`` and MariaDB's ``LOAD DATA`` read them: ``\\|`` a ``|`` inside a value,
``\\\\`` a backslash, ``\\n`` a newline, ``\\N`` NULL. Dates are ``YYYY-MM-DD``, timestamps ``YYYY-MM-DD HH:MM:SS``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["int", "bigint", "decimal", "float", "char", "varchar", "text", "date", "timestamp", "bool"]
KINDS: tuple[Kind, ...] = ("int", "bigint", "decimal", "float", "char", "varchar", "text", "date", "timestamp",
                           "bool")
_TYPE = re.compile(r"^\s*(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")
_SYNONYMS = {"integer": "int", "smallint": "int", "numeric": "decimal", "real": "float", "double": "float",
             "boolean": "bool", "datetime": "timestamp", "string": "text"}


@dataclass(frozen=True)
class ColumnSpec:
    """One column: its name, a portable type such as ``int``, ``decimal(15,2)``, ``varchar(40)``, ``date``."""

    name: str
    type: str
    nullable: bool = False

    @property
    def kind(self) -> Kind:
        """The type's kind, without its length or precision."""
        return parse_type(self.type)[0]

    @property
    def size(self) -> tuple[int, ...]:
        """Length (char/varchar) or precision and scale (decimal); empty when none was given."""
        return parse_type(self.type)[1]


@dataclass(frozen=True)
class TableSpec:
    """One table: columns in data-file field order, and the key columns that stay usable for joins."""

    name: str
    columns: tuple[ColumnSpec, ...]
    primary_key: tuple[str, ...] = ()
    #: columns that reference other tables (joins and keys: column encryption leaves them plaintext)
    foreign_key_columns: tuple[str, ...] = ()

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def key_columns(self) -> set[str]:
        """Primary- and foreign-key columns."""
        return set(self.primary_key) | set(self.foreign_key_columns)

    def column(self, name: str) -> ColumnSpec:
        """The column called ``name`` (KeyError if there is none)."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name} has no column {name}")


@functools.lru_cache(maxsize=1024)  # asked for every value a data file converts
def parse_type(text: str) -> tuple[Kind, tuple[int, ...]]:
    """``decimal(15,2)`` -> ("decimal", (15, 2)); ValueError naming the known types otherwise."""
    match = _TYPE.match(text.lower())
    kind = _SYNONYMS.get(match.group(1), match.group(1)) if match else ""
    if not match or kind not in KINDS:
        raise ValueError(f"unknown column type {text!r}; use one of: {', '.join(KINDS)} (with (n) or (p,s))")
    return kind, tuple(int(g) for g in match.groups()[1:] if g is not None)  # type: ignore[return-value]


def unescape_field(text: str) -> str | None:
    """One data-file field with its backslash escapes resolved (``\\N`` alone is NULL -> None)."""
    if "\\" not in text:
        return text
    if text == "\\N":
        return None
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def split_line(line: str) -> list[str | None]:
    """The fields of one data-file line (without its newline), escapes resolved."""
    fields: list[str] = []
    current: list[str] = []
    i = 0
    if "\\" not in line:
        parts = line.split("|")
        return parts[:-1] if parts and parts[-1] == "" else parts  # type: ignore[return-value]
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            current.append(line[i:i + 2])
            i += 2
            continue
        if ch == "|":
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if current:
        fields.append("".join(current))
    return [unescape_field(f) for f in fields]


def escape_field(value: object) -> str:
    """A value written as one data-file field (None -> ``\\N``)."""
    if value is None:
        return "\\N"
    text = str(value)
    if not any(c in text for c in "\\|\n\r"):
        return text
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n").replace("\r", "\\r")
