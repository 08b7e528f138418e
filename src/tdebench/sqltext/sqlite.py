"""What sqlglot leaves out when it writes SQL for SQLite: standard date expressions (SQLite's dates are ISO
texts read by its date functions), decimal types (kept NUMERIC, the affinity SQLite gives DECIMAL) and
``SUBSTRING`` (``SUBSTR``, which SQLite reads in every version; ``SUBSTRING`` only from 3.34).

sqlglot writes ``EXTRACT(YEAR FROM d)`` and ``d + INTERVAL '30' DAY`` for SQLite as they are, which SQLite does
not parse. Here they become ``CAST(STRFTIME('%Y', d) AS INTEGER)`` and ``DATE(d, '+30 day')`` (``DATETIME`` when
the operand is a timestamp: SQLite keeps dates as ``YYYY-MM-DD`` and timestamps as ``YYYY-MM-DD HH:MM:SS``, and
the two compare as texts, so the result must keep its operand's form). sqlglot writes ``DECIMAL(p,s)`` as
``REAL``, which would store ``5.00`` as ``5.0`` where SQLite itself stores ``5``: the type stays ``NUMERIC(p,s)``.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlglot import exp

_FORMATS = {"YEAR": "%Y", "MONTH": "%m", "DAY": "%d", "HOUR": "%H", "MINUTE": "%M", "SECOND": "%S",
            "DOW": "%w", "DOY": "%j", "EPOCH": "%s", "WEEK": "%W"}
_UNITS = {"YEAR": "year", "MONTH": "month", "WEEK": "day", "DAY": "day", "HOUR": "hour", "MINUTE": "minute",
          "SECOND": "second"}
_TIME_UNITS = {"hour", "minute", "second"}


def _unit(node: exp.Expression | None) -> str:
    name = (node.name if node is not None else "DAY").upper().rstrip("S") or "DAY"
    return {"DOW": "DOW", "DOY": "DOY", "EPOCH": "EPOCH"}.get(name, name)


def _strftime(unit: str, value: exp.Expression) -> exp.Expression:
    if unit == "QUARTER":
        month = _strftime("MONTH", value)
        return exp.Paren(this=exp.Div(this=exp.Paren(this=exp.Add(this=month, expression=exp.Literal.number(2))),
                                      expression=exp.Literal.number(3), typed=True))
    if unit not in _FORMATS:
        raise ValueError(f"EXTRACT({unit} FROM ...) has no SQLite equivalent")
    call = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(_FORMATS[unit]), value.copy()])
    return exp.Cast(this=call, to=exp.DataType.build("INTEGER"))


def _is_date(node: exp.Expression, date_columns: Collection[str]) -> bool:
    """True when ``node`` is a date (no time of day): a DATE cast or literal, CURRENT_DATE, a DATE column."""
    if isinstance(node, exp.Paren):
        return _is_date(node.this, date_columns)
    if isinstance(node, exp.Cast):
        return node.to.this == exp.DataType.Type.DATE
    if isinstance(node, (exp.CurrentDate, exp.Date, exp.TsOrDsToDate)):
        return True
    if isinstance(node, exp.Anonymous):
        return node.name.upper() == "DATE"
    if isinstance(node, exp.Column):
        return node.name.lower() in date_columns
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
        return _is_date(node.this, date_columns) and _UNITS.get(_unit(node.expression.args.get("unit"))) \
            not in _TIME_UNITS
    return False


def _shift(value: exp.Expression, amount: exp.Expression, unit: str, sign: int,
           date_columns: Collection[str]) -> exp.Expression:
    """``DATE(value, '+n unit')`` (DATETIME for a timestamp or a time unit)."""
    if unit not in _UNITS or not isinstance(amount, exp.Literal):
        raise ValueError(f"interval arithmetic in {unit} with a computed amount has no SQLite equivalent")
    number = float(amount.this) * (7 if unit == "WEEK" else 1)
    text = f"{'+' if number * sign >= 0 else '-'}{abs(number):g} {_UNITS[unit]}"
    function = "DATE" if _is_date(value, date_columns) and _UNITS[unit] not in _TIME_UNITS else "DATETIME"
    return exp.Anonymous(this=function, expressions=[value.copy(), exp.Literal.string(text)])


def _interval(node: exp.Interval) -> tuple[exp.Expression, str]:
    """(amount, unit) of ``INTERVAL '30' DAY`` (sqlglot splits PostgreSQL's ``'30 days'`` already)."""
    amount, unit = node.this, _unit(node.args.get("unit"))
    if isinstance(amount, exp.Literal) and " " in amount.this.strip():  # INTERVAL '30 days' left whole
        number, _, word = amount.this.strip().partition(" ")
        amount, unit = exp.Literal.number(number), _unit(exp.Var(this=word))
    return amount, unit


def _rewrite(node: exp.Expression, date_columns: Collection[str]) -> exp.Expression:
    if isinstance(node, exp.Substring):  # SUBSTRING only from SQLite 3.34; SUBSTR in every version
        parts = [node.this, node.args.get("start") or exp.Literal.number(1), node.args.get("length")]
        return exp.Anonymous(this="SUBSTR", expressions=[p.copy() for p in parts if p is not None])
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.DECIMAL:
        size = f"({', '.join(e.sql() for e in node.expressions)})" if node.expressions else ""
        return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind="NUMERIC" + size)
    if isinstance(node, exp.Extract):
        return _strftime(_unit(node.this), node.expression)
    if isinstance(node, (exp.Year, exp.Month, exp.Day)):
        return _strftime(type(node).__name__.upper(), node.this)
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
        amount, unit = _interval(node.expression)
        return _shift(node.this, amount, unit, 1 if isinstance(node, exp.Add) else -1, date_columns)
    if isinstance(node, exp.Add) and isinstance(node.this, exp.Interval):
        amount, unit = _interval(node.this)
        return _shift(node.expression, amount, unit, 1, date_columns)
    if isinstance(node, (exp.DateAdd, exp.DateSub)):
        sign = 1 if isinstance(node, exp.DateAdd) else -1
        return _shift(node.this, node.expression, _unit(node.args.get("unit")), sign, date_columns)
    return node


def rewrite(tree: exp.Expression, date_columns: Collection[str] = ()) -> exp.Expression:
    """``tree`` with EXTRACT, YEAR()/MONTH()/DAY() and interval arithmetic in SQLite's date functions, decimal
    types NUMERIC, SUBSTRING as SUBSTR;
    ``date_columns``: lower-case names of the DATE columns (the others hold timestamps or no dates).
    ValueError for an expression SQLite has no equivalent of."""
    tree = tree.copy()
    for node in reversed(list(tree.walk(bfs=False))):  # children first: their parents copy them rewritten
        new = _rewrite(node, date_columns)
        if new is not node:
            if node is tree:
                return new
            node.replace(new)
    left = tree.find(exp.Interval)
    if left is not None:  # e.g. n * INTERVAL '1 day': a computed amount
        raise ValueError(f"interval arithmetic {left.parent.sql() if left.parent else left.sql()} has no SQLite "
                         "equivalent")
    return tree
