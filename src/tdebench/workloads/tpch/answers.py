"""TPC-H answers: normalization to text, CSV files, and comparison with the spec's tolerances.

Tolerances (TPC-H 2.1.3.5, by column kind):

* ``int`` (counts, keys, years, other integers): exact.
* ``exact`` (a stored decimal, e.g. ``s_acctbal``): equal after rounding to 0.01.
* ``sum`` (currency sums and values derived from one): within 100.
* ``avg`` (averages and ratios): the actual value rounded to 0.01 is within 1% of the expected value.
* ``str`` and ``date``: equal after trimming surrounding blanks, case-sensitive.

A column missing from :data:`COLUMNS` is compared as text when either side is not a number, else it must be
equal after rounding to 0.01 or within 1%. NULL (empty text) only equals NULL.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Any

_CENT = Decimal("0.01")
MAX_MISMATCHES = 5

# Per query: the SELECT list as (column name, kind), in order.
COLUMNS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (("l_returnflag", "str"), ("l_linestatus", "str"), ("sum_qty", "sum"), ("sum_base_price", "sum"),
        ("sum_disc_price", "sum"), ("sum_charge", "sum"), ("avg_qty", "avg"), ("avg_price", "avg"),
        ("avg_disc", "avg"), ("count_order", "int")),
    2: (("s_acctbal", "exact"), ("s_name", "str"), ("n_name", "str"), ("p_partkey", "int"), ("p_mfgr", "str"),
        ("s_address", "str"), ("s_phone", "str"), ("s_comment", "str")),
    3: (("l_orderkey", "int"), ("revenue", "sum"), ("o_orderdate", "date"), ("o_shippriority", "int")),
    4: (("o_orderpriority", "str"), ("order_count", "int")),
    5: (("n_name", "str"), ("revenue", "sum")),
    6: (("revenue", "sum"),),
    7: (("supp_nation", "str"), ("cust_nation", "str"), ("l_year", "int"), ("revenue", "sum")),
    8: (("o_year", "int"), ("mkt_share", "avg")),
    9: (("nation", "str"), ("o_year", "int"), ("sum_profit", "sum")),
    10: (("c_custkey", "int"), ("c_name", "str"), ("revenue", "sum"), ("c_acctbal", "exact"), ("n_name", "str"),
         ("c_address", "str"), ("c_phone", "str"), ("c_comment", "str")),
    11: (("ps_partkey", "int"), ("value", "sum")),
    12: (("l_shipmode", "str"), ("high_line_count", "int"), ("low_line_count", "int")),
    13: (("c_count", "int"), ("custdist", "int")),
    14: (("promo_revenue", "avg"),),
    15: (("s_suppkey", "int"), ("s_name", "str"), ("s_address", "str"), ("s_phone", "str"),
         ("total_revenue", "sum")),
    16: (("p_brand", "str"), ("p_type", "str"), ("p_size", "int"), ("supplier_cnt", "int")),
    17: (("avg_yearly", "sum"),),
    18: (("c_name", "str"), ("c_custkey", "int"), ("o_orderkey", "int"), ("o_orderdate", "date"),
         ("o_totalprice", "exact"), ("sum", "sum")),
    19: (("revenue", "sum"),),
    20: (("s_name", "str"), ("s_address", "str")),
    21: (("s_name", "str"), ("numwait", "int")),
    22: (("cntrycode", "str"), ("numcust", "int"), ("totacctbal", "sum")),
}


def _unsigned_zero(text: str) -> str:
    return "0.00" if text == "-0.00" else text


def _cents(value: Decimal) -> str:
    return _unsigned_zero(str(value.quantize(_CENT, rounding=ROUND_HALF_UP)))


def normalize_value(value: Any) -> str:
    """One value as answer text: NULL -> "", dates -> YYYY-MM-DD, floats and decimals -> two decimals.

    A Decimal without fractional digits (PostgreSQL's ``extract(year ...)``, MariaDB's sum of integers) is an
    integer and written as one, so engines agree on its text.
    """
    if value is None:
        return ""
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10]
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        return str(int(value)) if value.as_tuple().exponent == 0 else _cents(value)
    if isinstance(value, float):
        return _unsigned_zero("%.2f" % value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8").strip()
    return str(value).strip()


def normalize_row(row: Iterable[Any]) -> list[str]:
    """A result row as answer text (see :func:`normalize_value`)."""
    return [normalize_value(v) for v in row]


def write_answer_csv(path: str | Path, columns: Sequence[str], rows: Iterable[Iterable[Any]]) -> None:
    """Write a header of lower-case column names, then the normalized rows."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow([c.lower() for c in columns])
        writer.writerows(normalize_row(r) for r in rows)


def read_answer_csv(path: str | Path) -> tuple[list[str], list[list[str]]]:
    """Read an answer file: (column names, rows of text)."""
    with Path(path).open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty answer file (no header row)")
    return rows[0], rows[1:]


def reference_dir(sf: float) -> Path | None:
    """The directory of bundled reference answers for scale factor ``sf``, or None if there are none."""
    folder = resources.files("tdebench.workloads.tpch").joinpath("answers", f"sf{sf:g}")
    return Path(str(folder)) if folder.is_dir() else None


def finite_number(text: str) -> Decimal | None:
    """``text`` as a finite decimal, or None when it is none."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _cell_matches(kind: str, expected: str, actual: str) -> bool:
    if expected == "" or actual == "":
        return expected == actual
    if kind in ("str", "date"):
        return expected == actual
    e, a = finite_number(expected), finite_number(actual)
    if e is None or a is None:
        return expected == actual
    if kind == "int":
        return e == a
    if kind == "exact":
        return e.quantize(_CENT, ROUND_HALF_UP) == a.quantize(_CENT, ROUND_HALF_UP)
    if kind == "sum":
        return abs(a - e) <= 100
    within_1pct = abs(a.quantize(_CENT, ROUND_HALF_UP) - e) <= abs(e) / 100
    if kind == "avg":
        return within_1pct
    return within_1pct or e.quantize(_CENT, ROUND_HALF_UP) == a.quantize(_CENT, ROUND_HALF_UP)


def compare_answers(number: int, expected_rows: Sequence[Sequence[Any]],
                    actual_rows: Sequence[Sequence[Any]]) -> list[str]:
    """Differences between two answers of query ``number`` (empty when they match within tolerance).

    Rows may be raw database values or answer text; both sides are normalized first. At most
    :data:`MAX_MISMATCHES` differences are described, plus a line saying how many more there were.
    """
    label = f"q{number:02d}"
    if len(expected_rows) != len(actual_rows):
        return [f"{label}: expected {len(expected_rows)} rows, got {len(actual_rows)}"]
    columns = COLUMNS.get(number, ())
    problems: list[str] = []
    for i, (exp_row, act_row) in enumerate(zip(expected_rows, actual_rows), 1):
        exp, act = normalize_row(exp_row), normalize_row(act_row)
        if len(exp) != len(act):
            problems.append(f"{label} row {i}: expected {len(exp)} columns, got {len(act)}")
            continue
        for j, (e, a) in enumerate(zip(exp, act)):
            name, kind = columns[j] if j < len(columns) else (f"#{j + 1}", "")
            if not _cell_matches(kind, e, a):
                problems.append(f"{label} row {i} col {name}: expected {e or 'NULL'}, got {a or 'NULL'}")
    if len(problems) > MAX_MISMATCHES:
        extra = len(problems) - MAX_MISMATCHES
        problems = problems[:MAX_MISMATCHES] + [f"{label}: ... and {extra} more differences"]
    return problems
