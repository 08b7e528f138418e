"""A user's CSV/TSV files: read, checked against the table, converted once into the engines' data-file format.

* **CSV** (``data/<table>.csv``): comma-separated, ``"`` quotes (``""`` inside), values may hold commas and
  newlines when quoted (RFC 4180, as spreadsheets and ``COPY ... CSV`` write them).
* **TSV** (``data/<table>.tsv``): tab-separated, no quoting, backslash escapes ``\\t`` ``\\n`` ``\\r`` ``\\\\``
  and ``\\N`` for NULL (as ``COPY ... TO`` text format and ``mysql --batch`` write them).

Both start with a header row naming the table's columns (any order; every column once). A field equal to the
``null`` string (default: empty) is NULL. Values are checked by column type (integers, decimals within their
scale, ``YYYY-MM-DD`` dates, ``YYYY-MM-DD HH:MM:SS`` timestamps, booleans as true/false/t/f/yes/no/1/0, text
within its length) and NOT NULL, with one error naming file, line and column.

The converted files (:mod:`tdebench.api.tables` layout: ``|`` after every field, ``|``, ``\\`` and newlines
escaped, ``\\N`` for NULL) are cached by a hash of the source's content and the table's columns, so a run
converts each file once and later runs not at all.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal

from tdebench.api.tables import ColumnSpec, TableSpec, escape_field

FORMAT_VERSION = 1
_INT_RANGE = {"int": 2**31, "bigint": 2**63}
_BOOL = {"true": "1", "t": "1", "yes": "1", "y": "1", "1": "1", "false": "0", "f": "0", "no": "0", "n": "0",
         "0": "0"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.(\d{1,6}))?)?)$")
_TSV_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}
#: sampled values: printable ASCII with a letter, long enough to be found by chance nowhere else
_SAMPLE = re.compile(r"^(?=.*[A-Za-z])[ -~]{8,100}$")
_CANDIDATES_PER_COLUMN = 3


class DataProblem(ValueError):
    """A data file does not fit its table; ``str()`` names the line and column, ``fix`` how to repair it."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.fix = fix


@dataclass(frozen=True)
class DataFile:
    """One table's data: the file and its format."""

    table: str
    path: Path

    @property
    def kind(self) -> Literal["csv", "tsv"]:
        return "tsv" if self.path.suffix.lower() == ".tsv" else "csv"


@dataclass(frozen=True)
class Converted:
    """One converted file: where it is, its rows, and values sampled per text column for the at-rest scan."""

    table: str
    path: Path
    rows: int
    input_bytes: int
    candidates: dict[str, list[str]]


# reading ------------------------------------------------------------------------------------------------
def _tsv_field(text: str) -> str | None:
    if text == "\\N":
        return None
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(_TSV_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _records(file: DataFile) -> Iterator[tuple[int, list[str | None]]]:
    """(line number, raw fields) of every record, header first."""
    with open(file.path, encoding="utf-8-sig", newline="") as handle:
        if file.kind == "csv":
            reader = csv.reader(handle, strict=True)
            start = 1
            try:
                for record in reader:
                    yield start, list(record)
                    start = reader.line_num + 1
            except csv.Error as exc:
                raise DataProblem(f"line {reader.line_num}: {exc}", "quote values with commas, quotes or "
                                  "newlines in them (\"...\", a quote inside as \"\")") from None
            return
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\n").rstrip("\r")
            yield number, [_tsv_field(f) for f in line.split("\t")]


def _header(file: DataFile, fields: list[str | None], spec: TableSpec) -> list[int]:
    """For each table column, its position in the file; DataProblem for a header that does not fit."""
    names = [(f or "").strip().lower() for f in fields]
    wanted = spec.column_names
    missing = [c for c in wanted if c not in names]
    extra = [n for n in names if n not in wanted]
    twice = sorted({n for n in names if names.count(n) > 1})
    if missing or extra or twice:
        what = (f"has no column {missing[0]}" if missing else f"has a column {extra[0]!r} that table "
                f"{spec.name} does not have" if extra else f"names column {twice[0]} twice")
        raise DataProblem(f"line 1 (header) {what}", f"the first line must name the columns of {spec.name}: "
                          f"{','.join(wanted)}")
    return [names.index(c) for c in wanted]


def _integer(text: str, column: ColumnSpec) -> str:
    value = text.strip()
    if not re.fullmatch(r"[+-]?\d+", value):
        raise ValueError(f"{text!r} is not a whole number")
    if abs(int(value)) >= _INT_RANGE[column.kind]:
        raise ValueError(f"{value} does not fit {column.type.upper()}")
    return str(int(value))


def _number(text: str, column: ColumnSpec) -> str:
    value = text.strip()
    try:
        number = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{text!r} is not a finite number")
    size = column.size
    if column.kind == "decimal" and len(size) == 2:
        places = -number.as_tuple().exponent if number.as_tuple().exponent < 0 else 0  # type: ignore[operator]
        if places > size[1]:
            raise ValueError(f"{value} has more than {size[1]} decimal places ({column.type})")
        if abs(number) >= Decimal(10) ** (size[0] - size[1]):
            raise ValueError(f"{value} does not fit {column.type}")
    return value


def _date(text: str, column: ColumnSpec) -> str:
    value = text.strip()
    try:
        if not _DATE.match(value):
            raise ValueError
        date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{text!r} is not a date YYYY-MM-DD") from None
    return value


def _timestamp(text: str, column: ColumnSpec) -> str:
    match = _TIMESTAMP.match(text.strip())
    try:
        if not match:
            raise ValueError
        value = f"{match.group(1)} {match.group(2)}"
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{text!r} is not a timestamp YYYY-MM-DD HH:MM:SS") from None
    digits = len(match.group(3) or "")
    if digits > (column.size[0] if column.size else 0):
        raise ValueError(f"{text!r} has fractions of a second, which {column.type.upper()} does not keep "
                         f"(declare TIMESTAMP({digits}) or drop them)")
    return value


def _bool(text: str, column: ColumnSpec) -> str:
    flag = _BOOL.get(text.strip().lower())
    if flag is None:
        raise ValueError(f"{text!r} is not a boolean (true/false, t/f, yes/no, 1/0)")
    return flag


def _text(text: str, column: ColumnSpec) -> str:
    if column.size and len(text) > column.size[0]:
        raise ValueError(f"{len(text)} characters, longer than {column.type.upper()}")
    if "\x00" in text:
        raise ValueError("a NUL character, which no engine stores in text")
    return text


#: column kind -> the check and normal form of a field of that kind (char, varchar, text: :func:`_text`)
_CONVERTERS = {"int": _integer, "bigint": _integer, "decimal": _number, "float": _number, "date": _date,
               "timestamp": _timestamp, "bool": _bool}


def _value(text: str | None, column: ColumnSpec, null: str) -> str | None:
    """The field as the data-file value of ``column`` (None = NULL); ValueError with the reason."""
    if text is None or text == null:
        if not column.nullable:
            raise ValueError("NULL in a NOT NULL column" + (" (an empty field is NULL)" if text == "" else ""))
        return None
    return _CONVERTERS.get(column.kind, _text)(text, column)


def rows(file: DataFile, spec: TableSpec, null: str) -> Iterator[list[str | None]]:
    """The file's rows as data-file values in table column order; DataProblem naming line and column."""
    records = _records(file)
    try:
        _, header = next(records)
    except StopIteration:
        raise DataProblem("is empty", f"write a header line naming the columns of {spec.name}, then the rows") \
            from None
    except UnicodeDecodeError as exc:
        raise DataProblem(f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                          "convert it, e.g. iconv -f LATIN1 -t UTF-8") from None
    order = _header(file, header, spec)
    width = len(header)
    try:
        for number, fields in records:
            if fields == [""] or not fields:  # a blank line (e.g. at the end)
                continue
            if len(fields) != width:
                hint = ("quote values that contain commas" if file.kind == "csv"
                        else "write a tab inside a value as \\t")
                raise DataProblem(f"line {number}: {len(fields)} fields, expected {width} (as in the header)",
                                  hint)
            out = []
            for column, position in zip(spec.columns, order):
                try:
                    out.append(_value(fields[position], column, null))
                except ValueError as exc:
                    raise DataProblem(f"line {number}, column {column.name}: {exc}", _fix(column, null)) from None
            yield out
    except UnicodeDecodeError as exc:
        raise DataProblem(f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                          "convert it, e.g. iconv -f LATIN1 -t UTF-8") from None


def _fix(column: ColumnSpec, null: str) -> str:
    if column.kind in ("char", "varchar", "text") and null == "":
        return ("fill the value, or set [data] null = \"\\\\N\" in workload.toml so that an empty field is an "
                "empty text and only \\N is NULL")
    return f"correct the value, or change the column's type ({column.type}) in schema.sql"


def check(file: DataFile, spec: TableSpec, null: str) -> int:
    """Read the whole file as :func:`rows` does; returns the row count."""
    return sum(1 for _ in rows(file, spec, null))


# converting ---------------------------------------------------------------------------------------------
def content_key(file: DataFile, spec: TableSpec, null: str) -> str:
    """A hash of everything the converted file depends on: the source bytes, the columns, the null string."""
    digest = hashlib.sha256(json.dumps([FORMAT_VERSION, file.kind, null,
                                        [(c.name, c.type, c.nullable) for c in spec.columns]]).encode())
    with open(file.path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:24]


def _eligible(spec: TableSpec) -> list[int]:
    """Positions of the text columns whose values the at-rest scan may look for (not keys: column encryption
    leaves those plaintext by design)."""
    return [i for i, c in enumerate(spec.columns)
            if c.kind in ("char", "varchar", "text") and c.name not in spec.key_columns]


def convert(file: DataFile, spec: TableSpec, null: str, cache: Path) -> Converted:
    """The converted data file of ``file`` under ``cache`` (made now unless already there)."""
    key = content_key(file, spec, null)
    target = cache / f"{spec.name}-{key}.tbl"
    facts = target.with_suffix(".json")
    if target.is_file() and facts.is_file():
        known = json.loads(facts.read_text())
        return Converted(spec.name, target, int(known["rows"]), file.path.stat().st_size, known["candidates"])
    cache.mkdir(parents=True, exist_ok=True)
    eligible = _eligible(spec)
    candidates: dict[str, list[str]] = {spec.columns[i].name: [] for i in eligible}
    count = 0
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as out:
        for values in rows(file, spec, null):
            out.write("|".join(escape_field(v) for v in values) + "|\n")
            count += 1
            for i in eligible:
                value, seen = values[i], candidates[spec.columns[i].name]
                if len(seen) < _CANDIDATES_PER_COLUMN and value and _SAMPLE.match(value) and value not in seen:
                    seen.append(value)
    os.replace(tmp, target)
    tmp_facts = facts.with_name(f".{facts.name}.{os.getpid()}.tmp")
    tmp_facts.write_text(json.dumps({"rows": count, "candidates": candidates, "source": str(file.path)}))
    os.replace(tmp_facts, facts)
    return Converted(spec.name, target, count, file.path.stat().st_size, candidates)


def sample_values(converted: list[Converted], count: int, avoid: str) -> list[str]:
    """Up to ``count`` values, taken in turn from each table's text columns (so they come from different
    columns), none of them in ``avoid`` (the workload's SQL text: what is written in a statement may be logged)."""
    pools = [[v for v in values if v not in avoid] for c in converted for values in c.candidates.values()]
    pools = [p for p in pools if p]
    picked: list[str] = []
    depth = 0
    while len(picked) < count and any(len(p) > depth for p in pools):
        for pool in pools:
            if depth < len(pool) and len(picked) < count and not any(pool[depth] in p or p in pool[depth]
                                                                     for p in picked):
                picked.append(pool[depth])
        depth += 1
    return picked
