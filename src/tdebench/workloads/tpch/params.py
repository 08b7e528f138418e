"""TPC-H query parameters (the validation values of ``qgen -d``) and query rendering.

Query files hold ``{{name}}`` placeholders. Every derived value (end dates, Q1's cut-off date, Q6's discount
bounds, Q11's fraction, LIKE patterns, Q19's quantity ranges) is computed here exactly with ``Decimal`` and
``datetime.date``, so the SQL never does date or parameter arithmetic and dialects differ less.

A placeholder renders as a complete literal of its value's type: ``date`` -> the dialect's ``date_literal`` (``date
'YYYY-MM-DD'``; ``'YYYY-MM-DD'`` on SQLite, which stores dates as text), ``str`` -> a quoted string, ``int`` and
``Decimal`` -> a plain number.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal

from tdebench.api.dialect import BY_FAMILY, POSTGRES, as_dialect
from tdebench.workloads.tpch.templates import PLACEHOLDER, family_text

QUERY_NUMBERS = range(1, 23)

Value = str | int | Decimal | date


def add_months(day: date, months: int) -> date:
    """``day`` plus whole months (TPC-H dates are always first of a month or otherwise valid)."""
    index = day.year * 12 + day.month - 1 + months
    return day.replace(year=index // 12, month=index % 12 + 1)


def _period(start: date, months: int) -> dict[str, Value]:
    return {"date": start, "date_end": add_months(start, months)}


def _q06() -> dict[str, Value]:
    discount = Decimal("0.06")
    return {**_period(date(1994, 1, 1), 12), "discount_min": discount - Decimal("0.01"),
            "discount_max": discount + Decimal("0.01"), "quantity": 24}


def _q16() -> dict[str, Value]:
    sizes = (49, 14, 23, 45, 19, 3, 36, 9)
    return {"brand": "Brand#45", "type_pattern": "MEDIUM POLISHED%",
            **{f"size{i}": s for i, s in enumerate(sizes, 1)}}


def _q19() -> dict[str, Value]:
    values: dict[str, Value] = {}
    for i, (brand, quantity, span) in enumerate((("Brand#12", 1, 10), ("Brand#23", 10, 10),
                                                  ("Brand#34", 20, 10)), 1):
        values |= {f"brand{i}": brand, f"quantity{i}": quantity, f"quantity{i}_max": quantity + span}
    return values


def _q22() -> dict[str, Value]:
    codes = ("13", "31", "23", "29", "30", "18", "17")
    return {f"code{i}": c for i, c in enumerate(codes, 1)}


def parameters(number: int, sf: float) -> dict[str, Value]:
    """The validation parameters of query ``number`` at scale factor ``sf``, derived values included."""
    check_query_number(number)
    if not sf > 0:
        raise ValueError(f"scale factor must be positive, got {sf!r}")
    years_95_96 = {"date_min": date(1995, 1, 1), "date_max": date(1996, 12, 31)}
    table: dict[int, dict[str, Value]] = {
        1: {"ship_date_max": date(1998, 12, 1) - timedelta(days=90)},
        2: {"size": 15, "type_pattern": "%BRASS", "region": "EUROPE"},
        3: {"segment": "BUILDING", "date": date(1995, 3, 15)},
        4: _period(date(1993, 7, 1), 3),
        5: {"region": "ASIA", **_period(date(1994, 1, 1), 12)},
        6: _q06(),
        7: {"nation1": "FRANCE", "nation2": "GERMANY", **years_95_96},
        8: {"nation": "BRAZIL", "region": "AMERICA", "type": "ECONOMY ANODIZED STEEL", **years_95_96},
        9: {"color_pattern": "%green%"},
        10: _period(date(1993, 10, 1), 3),
        11: {"nation": "GERMANY", "fraction": Decimal("0.0001") / Decimal(str(sf))},
        12: {"shipmode1": "MAIL", "shipmode2": "SHIP", **_period(date(1994, 1, 1), 12)},
        13: {"comment_pattern": "%special%requests%"},
        14: _period(date(1995, 9, 1), 1),
        15: _period(date(1996, 1, 1), 3),
        16: _q16(),
        17: {"brand": "Brand#23", "container": "MED BOX"},
        18: {"quantity": 300},
        19: _q19(),
        20: {"color_pattern": "forest%", "nation": "CANADA", **_period(date(1994, 1, 1), 12)},
        21: {"nation": "SAUDI ARABIA"},
        22: _q22(),
    }
    return table[number]


def check_query_number(number: int) -> int:
    """Return ``number`` if it is a TPC-H query number, else raise ValueError."""
    if isinstance(number, bool) or not isinstance(number, int) or number not in QUERY_NUMBERS:
        raise ValueError(f"unknown TPC-H query {number!r}; queries are numbered 1 to 22")
    return number


def query_text(number: int, dialect: str) -> str:
    """The query template the engines of ``dialect``'s family run (:func:`templates.family_text`)."""
    check_query_number(number)
    return family_text(number, as_dialect(dialect).family)


def literal(value: Value, dialect: str) -> str:
    """``value`` as an SQL literal in ``dialect`` (a family, or another server's dialect: canonical literals)."""
    if isinstance(value, bool):
        raise TypeError("booleans are not TPC-H parameters")
    if isinstance(value, date):
        text = value.isoformat()
        return BY_FAMILY.get(dialect, POSTGRES).date_literal.format(text)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int):
        return str(value)
    raise TypeError(f"cannot render {type(value).__name__} as an SQL literal")


def fill(template: str, values: dict[str, Value], number: int, literal_of: Callable[[Value], str]) -> str:
    """Replace every ``{{name}}`` of query ``number``'s template with ``literal_of`` its value."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"q{number:02d} uses {{{{{name}}}}}, which has no value")
        return literal_of(values[name])

    return PLACEHOLDER.sub(substitute, template)


def render_query(number: int, dialect: str, sf: float) -> str:
    """Query ``number`` for ``dialect`` at scale factor ``sf`` with its validation parameters filled in."""
    return fill(query_text(number, dialect), parameters(number, sf), number, lambda v: literal(v, dialect))
