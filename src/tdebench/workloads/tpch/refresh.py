"""TPC-H refresh functions RF1 (new sales) and RF2 (old sales), with tdebench's own update data.

``tpchgen-cli`` writes no update sets, so tdebench generates them, following dbgen's key scheme and the
spec's column rules (docs/tpch-refresh.md explains every choice):

* Order keys are sparse. dbgen turns the order *index* ``i`` (1, 2, ...) into a key with
  ``mk_sparse(i, seq) = ((i >> 3) << 5) | (seq << 3) | (i & 7)``: base data uses ``seq = 0``, i.e. key offsets
  0-7 of every 32 (1..7, 32..39, 64..71, ...), and every update set uses ``seq = 1``, offsets 8-15.
* Update set ``u`` (1-based) owns the order indexes ``(u-1)·n + 1 .. u·n`` with ``n = round(SF·1500)``:
  RF1 inserts the orders ``mk_sparse(i, 1)`` and RF2 deletes the base orders ``mk_sparse(i, 0)`` of that
  slice, so sets never collide, RF2 deletes from the lowest keys up, and RF2 never deletes an RF1 order.
* Rows are drawn from a seeded RNG per (SF, update set), never from the database: o_custkey in the customer
  range and not divisible by 3, dates in the spec's ranges, parts/suppliers from the partsupp formula, prices
  from the retail-price formula, statuses and flags from the dates, o_totalprice from the lineitems.

:func:`apply_rf1` / :func:`apply_rf2` run one set in one transaction with ``executemany`` and time it with
``tdebench.api.clock.now_ns`` from BEGIN to the return of COMMIT (parameter conversion happens before the clock
starts).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from tdebench.api import clock
from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.errors import UsageError
from tdebench.workloads.tpch import schema

# dbgen's constants (dss.h / spec 4.2.3)
ORDERS_PER_SF = 1_500_000
CUSTOMERS_PER_SF = 150_000
PARTS_PER_SF = 200_000
SUPPLIERS_PER_SF = 10_000
RF_ORDERS_PER_SF = 1500  # SF·1500 orders per update set (UPD_PCT = 10 per 10,000)
SPARSE_BLOCK = 32  # key values per block ...
SPARSE_KEEP = 8  # ... of which the base data uses offsets 0-7 and the update sets offsets 8-15
START_DATE = date(1992, 1, 1)
CURRENT_DATE = date(1995, 6, 17)
END_DATE = date(1998, 12, 31)
ORDER_DATE_MAX = END_DATE - timedelta(days=151)  # 1998-08-02: the latest line is still received by END_DATE
LINES_MIN, LINES_MAX = 1, 7
QUANTITY_MIN, QUANTITY_MAX = 1, 50
DISCOUNT_MAX, TAX_MAX = 10, 8  # percent
SHIP_DAYS = (1, 121)  # after the order date
COMMIT_DAYS = (30, 90)  # after the order date
RECEIPT_DAYS = (1, 30)  # after the ship date
ORDER_COMMENT_LEN = (19, 78)  # TEXT(49): 0.4..1.6 x the mean, within varchar(79)
LINE_COMMENT_LEN = (10, 43)  # TEXT(27), within varchar(44)
PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")
INSTRUCTIONS = ("DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN")
SHIP_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")

PLACEHOLDERS = {"qmark": "?", "format": "%s"}  # a driver's parameter marker by its paramstyle

ORDER_COLUMNS = tuple(schema.column_names("orders"))
LINEITEM_COLUMNS = tuple(schema.column_names("lineitem"))

_CENT = Decimal("0.01")
_SEED_VERSION = "tdebench-tpch-refresh-v1"


# keys and formulas ---------------------------------------------------------------------------------------------

def _count(per_sf: int, sf: float) -> int:
    """Rows of a table at ``sf`` as the generator truncates them (at least 1)."""
    return max(1, int(per_sf * sf + 1e-9))


def orders_per_set(sf: float) -> int:
    """Orders RF1 inserts and RF2 deletes per update set: SF·1500 rounded half up, at least 1."""
    _check_sf(sf)
    return max(1, math.floor(sf * RF_ORDERS_PER_SF + 0.5))


def max_update_set(sf: float) -> int:
    """Highest update set whose RF2 slice still lies within the base orders."""
    return _count(ORDERS_PER_SF, sf) // orders_per_set(sf)


def sparse_key(index: int, seq: int) -> int:
    """dbgen's ``mk_sparse``: order index -> order key in key offset ``8·seq + (index mod 8)`` of its block."""
    return ((index >> 3) << 5) | (seq << 3) | (index & 7)


def set_indexes(sf: float, update_set: int) -> range:
    """Order indexes owned by ``update_set``: ``(u-1)·n + 1 .. u·n``."""
    _check_set(sf, update_set)
    n = orders_per_set(sf)
    return range((update_set - 1) * n + 1, update_set * n + 1)


def insert_keys(sf: float, update_set: int) -> list[int]:
    """Order keys RF1 of ``update_set`` inserts (key offsets 8-15 of their blocks of 32)."""
    return [sparse_key(i, 1) for i in set_indexes(sf, update_set)]


def delete_keys(sf: float, update_set: int) -> list[int]:
    """Base order keys RF2 of ``update_set`` deletes: the ``update_set``-th slice from the lowest key up."""
    return [sparse_key(i, 0) for i in set_indexes(sf, update_set)]


def retail_price_cents(partkey: int) -> int:
    """p_retailprice in cents: 90000 + ((partkey/10) mod 20001) + 100·(partkey mod 1000)."""
    return 90000 + (partkey // 10) % 20001 + 100 * (partkey % 1000)


def partsupp_supplier(partkey: int, i: int, suppliers: int) -> int:
    """The i-th (0..3) supplier of ``partkey``: (partkey + i·(S/4 + (partkey-1)/S)) mod S + 1."""
    return (partkey + i * (suppliers // 4 + (partkey - 1) // suppliers)) % suppliers + 1


def line_charge_cents(extended_cents: int, discount_pct: int, tax_pct: int) -> int:
    """One line's share of o_totalprice, truncated to cents as dbgen does: eprice·(1-disc)·(1+tax)."""
    return extended_cents * (100 - discount_pct) // 100 * (100 + tax_pct) // 100


def _check_sf(sf: float) -> None:
    if not (isinstance(sf, (int, float)) and math.isfinite(sf) and sf > 0):
        raise UsageError(f"scale factor must be > 0, not {sf!r}", "use e.g. --sf 0.01, 0.1 or 1")


def _check_set(sf: float, update_set: int) -> None:
    _check_sf(sf)
    highest = max_update_set(sf)
    if not isinstance(update_set, int) or not 1 <= update_set <= highest:
        raise UsageError(f"TPC-H update set {update_set!r} does not exist at SF {sf:g}",
                         f"use 1..{highest}, or reset the database between trials so sets can be reused")


# generation ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RefreshSet:
    """One update set: RF1's new orders and lineitems, RF2's order keys.

    Rows are tuples in schema column order (:data:`ORDER_COLUMNS`, :data:`LINEITEM_COLUMNS`) holding ``int``,
    ``str``, ``Decimal`` (money, quantity, discount, tax) and ``datetime.date``; :meth:`params` converts them
    for a dialect.
    """

    sf: float
    update_set: int
    orders: tuple[tuple[Any, ...], ...]
    lineitems: tuple[tuple[Any, ...], ...]
    delete_keys: tuple[int, ...]
    _params: dict[str, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[int]]]] = field(
        default_factory=dict, repr=False, compare=False, hash=False)

    @property
    def insert_keys(self) -> tuple[int, ...]:
        return tuple(row[0] for row in self.orders)

    def params(self, dialect: Dialect) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[int]]]:
        """(order rows, lineitem rows, delete-key rows) as the dialect's driver takes them; cached."""
        kind = "typed" if dialect.typed_values else "untyped"
        if kind not in self._params:
            convert = _identity if dialect.typed_values else _untyped
            self._params[kind] = ([convert(r) for r in self.orders], [convert(r) for r in self.lineitems],
                                  [(k,) for k in self.delete_keys])
        return self._params[kind]


def _identity(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return row


def _untyped(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Decimals -> the nearest double (what loading ``.tbl`` text gives), dates -> ``YYYY-MM-DD`` text."""
    return tuple(float(v) if isinstance(v, Decimal) else v.isoformat() if isinstance(v, date) else v
                 for v in row)


def _seed(sf: float, update_set: int) -> int:
    text = f"{_SEED_VERSION}/sf={sf:g}/set={update_set}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def _money(cents: int) -> Decimal:
    return Decimal(cents).scaleb(-2).quantize(_CENT)


def refresh_set(sf: float, update_set: int) -> RefreshSet:
    """Update set ``update_set`` (1-based) at ``sf``; the same arguments always give the same rows."""
    _check_set(sf, update_set)
    rng = random.Random(_seed(sf, update_set))
    customers = _count(CUSTOMERS_PER_SF, sf)
    parts = _count(PARTS_PER_SF, sf)
    suppliers = _count(SUPPLIERS_PER_SF, sf)
    clerks = max(1000, int(sf * 1000 + 1e-9))
    text = _TextPool(rng)
    orders: list[tuple[Any, ...]] = []
    lineitems: list[tuple[Any, ...]] = []
    for okey in insert_keys(sf, update_set):
        order, lines = _make_order(rng, text, okey, customers, parts, suppliers, clerks)
        orders.append(order)
        lineitems.extend(lines)
    return RefreshSet(sf, update_set, tuple(orders), tuple(lineitems), tuple(delete_keys(sf, update_set)))


def _customer(rng: random.Random, customers: int) -> int:
    """A customer key not divisible by 3 (a third of the customers never order), as dbgen picks it."""
    key = rng.randint(1, customers)
    delta = 1
    while key % 3 == 0:
        key = min(key + delta, customers)
        delta = -delta
    return key


def _make_order(rng: random.Random, text: "_TextPool", okey: int, customers: int, parts: int, suppliers: int,
                clerks: int) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    custkey = _customer(rng, customers)
    order_date = START_DATE + timedelta(days=rng.randint(0, (ORDER_DATE_MAX - START_DATE).days))
    priority = rng.choice(PRIORITIES)
    clerk = f"Clerk#{rng.randint(1, clerks):09d}"
    comment = text.comment(*ORDER_COMMENT_LEN)
    total = 0
    shipped = 0
    lines = []
    count = rng.randint(LINES_MIN, LINES_MAX)
    for number in range(1, count + 1):
        quantity = rng.randint(QUANTITY_MIN, QUANTITY_MAX)
        discount = rng.randint(0, DISCOUNT_MAX)
        tax = rng.randint(0, TAX_MAX)
        partkey = rng.randint(1, parts)
        suppkey = partsupp_supplier(partkey, rng.randint(0, 3), suppliers)
        extended = retail_price_cents(partkey) * quantity
        total += line_charge_cents(extended, discount, tax)
        ship = order_date + timedelta(days=rng.randint(*SHIP_DAYS))
        commit = order_date + timedelta(days=rng.randint(*COMMIT_DAYS))
        receipt = ship + timedelta(days=rng.randint(*RECEIPT_DAYS))
        return_flag = rng.choice("RA") if receipt <= CURRENT_DATE else "N"
        line_status = "F" if ship <= CURRENT_DATE else "O"
        shipped += line_status == "F"
        lines.append((okey, partkey, suppkey, number, _money(100 * quantity), _money(extended), _money(discount),
                      _money(tax), return_flag, line_status, ship, commit, receipt, rng.choice(INSTRUCTIONS),
                      rng.choice(SHIP_MODES), text.comment(*LINE_COMMENT_LEN)))
    status = "F" if shipped == count else "O" if shipped == 0 else "P"
    order = (okey, custkey, status, _money(total), order_date, priority, clerk, 0, comment)
    return order, lines


# dbgen-like comment text: sentences from the spec's grammar (4.2.2.10) and word distributions, cut at random
# offsets out of a pool, as dbgen's TEXT() does (so comments may start and end mid-word).
_NOUNS = (("packages", 40), ("requests", 40), ("accounts", 40), ("deposits", 40), ("foxes", 20), ("ideas", 20),
          ("theodolites", 20), ("pinto beans", 20), ("instructions", 20), ("dependencies", 10), ("excuses", 10),
          ("platelets", 10), ("asymptotes", 10), ("courts", 5), ("dolphins", 5), ("multipliers", 1),
          ("sauternes", 1), ("warthogs", 1), ("frets", 1), ("dinos", 1), ("attainments", 1), ("somas", 1),
          ("Tiresias", 1), ("patterns", 1), ("forges", 1), ("braids", 1), ("frays", 1), ("warhorses", 1),
          ("dugouts", 1), ("notornis", 1), ("epitaphs", 1), ("pearls", 1), ("tithes", 1), ("waters", 1),
          ("orbits", 1), ("gifts", 1), ("sheaves", 1), ("depths", 1), ("sentiments", 1), ("decoys", 1),
          ("realms", 1), ("pains", 1), ("grouches", 1), ("escapades", 1), ("hockey players", 1))
_VERBS = (("sleep", 20), ("wake", 20), ("are", 20), ("cajole", 20), ("haggle", 20), ("nag", 10), ("use", 10),
          ("boost", 10), ("affix", 5), ("detect", 5), ("integrate", 5), ("maintain", 1), ("nod", 1), ("was", 1),
          ("lose", 1), ("sublate", 1), ("solve", 1), ("thrash", 1), ("promise", 1), ("engage", 1), ("hinder", 1),
          ("print", 1), ("x-ray", 1), ("breach", 1), ("eat", 1), ("grow", 1), ("impress", 1), ("mold", 1),
          ("poach", 1), ("serve", 1), ("run", 1), ("dazzle", 1), ("snooze", 1), ("doze", 1), ("unwind", 1),
          ("kindle", 1), ("play", 1), ("hang", 1), ("believe", 1), ("doubt", 1))
_ADJECTIVES = (("special", 20), ("pending", 20), ("unusual", 20), ("express", 20), ("furious", 1), ("sly", 1),
               ("careful", 1), ("blithe", 1), ("quick", 1), ("fluffy", 1), ("slow", 1), ("quiet", 1),
               ("ruthless", 1), ("thin", 1), ("close", 1), ("dogged", 1), ("daring", 1), ("brave", 1),
               ("stealthy", 1), ("permanent", 1), ("enticing", 1), ("idle", 1), ("busy", 1), ("regular", 50),
               ("final", 40), ("ironic", 40), ("even", 30), ("bold", 20), ("silent", 10))
_ADVERBS = (("sometimes", 1), ("always", 1), ("never", 1), ("furiously", 50), ("slyly", 50), ("carefully", 50),
            ("blithely", 40), ("quickly", 30), ("fluffily", 20), ("slowly", 1), ("quietly", 1), ("ruthlessly", 1),
            ("thinly", 1), ("closely", 1), ("doggedly", 1), ("daringly", 1), ("bravely", 1), ("stealthily", 1),
            ("permanently", 1), ("enticingly", 1), ("idly", 1), ("busily", 1), ("regularly", 1), ("finally", 1),
            ("ironically", 1), ("evenly", 1), ("boldly", 1), ("silently", 1))
_PREPOSITIONS = (("about", 50), ("above", 50), ("according to", 50), ("across", 50), ("after", 50),
                 ("against", 40), ("along", 40), ("alongside of", 30), ("among", 30), ("around", 20), ("at", 10),
                 ("atop", 1), ("before", 1), ("behind", 1), ("beneath", 1), ("beside", 1), ("besides", 1),
                 ("between", 1), ("beyond", 1), ("by", 1), ("despite", 1), ("during", 1), ("except", 1),
                 ("for", 1), ("from", 1), ("in place of", 1), ("inside", 1), ("instead of", 1), ("into", 1),
                 ("near", 1), ("of", 1), ("on", 1), ("outside", 1), ("over", 1), ("past", 1), ("since", 1),
                 ("through", 1), ("throughout", 1), ("to", 1), ("toward", 1), ("under", 1), ("until", 1),
                 ("up", 1), ("upon", 1), ("without", 1), ("with", 1), ("within", 1))
_AUXILIARIES = (("do", 1), ("may", 1), ("might", 1), ("shall", 1), ("will", 1), ("would", 1), ("can", 1),
                ("could", 1), ("should", 1), ("ought to", 1), ("must", 1), ("will have to", 1),
                ("shall have to", 1), ("could have to", 1), ("should have to", 1), ("must have to", 1),
                ("need to", 1), ("try to", 1))
_TERMINATORS = ((".", 50), (";", 1), (":", 1), ("?", 1), ("!", 1), ("--", 1))
_SENTENCES = ((("N", "V", "T"), 3), (("N", "V", "P", "T"), 3), (("N", "V", "N", "T"), 3),
              (("N", "P", "V", "N", "T"), 1), (("N", "P", "V", "P", "T"), 1))
_NOUN_PHRASES = ((("N",), 10), (("J", "N"), 20), (("J", "J", "N"), 10), (("D", "J", "N"), 50))
_VERB_PHRASES = ((("V",), 30), (("X", "V"), 1), (("V", "D"), 40), (("X", "V", "D"), 1))
_POOL_CHARS = 1 << 16
_CUMULATIVE = {id(t): ([v for v, _ in t], list(itertools.accumulate(w for _, w in t)))
               for t in (_NOUNS, _VERBS, _ADJECTIVES, _ADVERBS, _PREPOSITIONS, _AUXILIARIES, _TERMINATORS,
                         _SENTENCES, _NOUN_PHRASES, _VERB_PHRASES)}


class _TextPool:
    """A pool of grammar text drawn from ``rng``; comments are random slices of it."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        parts: list[str] = []
        size = 0
        while size < _POOL_CHARS:
            sentence = self._sentence()
            parts.append(sentence)
            size += len(sentence) + 1
        self._pool = " ".join(parts)

    def _pick(self, table: tuple[tuple[Any, int], ...]) -> Any:
        values, cumulative = _CUMULATIVE[id(table)]
        return self._rng.choices(values, cum_weights=cumulative)[0]

    def _noun_phrase(self) -> str:
        words = {"N": _NOUNS, "J": _ADJECTIVES, "D": _ADVERBS}
        kinds = self._pick(_NOUN_PHRASES)
        picked = [self._pick(words[kind]) for kind in kinds]
        if kinds == ("J", "J", "N"):  # the grammar writes two adjectives as "J, J N"
            picked[0] += ","
        return " ".join(picked)

    def _verb_phrase(self) -> str:
        words = {"V": _VERBS, "D": _ADVERBS, "X": _AUXILIARIES}
        return " ".join(self._pick(words[kind]) for kind in self._pick(_VERB_PHRASES))

    def _sentence(self) -> str:
        out: list[str] = []
        for kind in self._pick(_SENTENCES):
            if kind == "N":
                out.append(self._noun_phrase())
            elif kind == "V":
                out.append(self._verb_phrase())
            elif kind == "P":
                out.append(f"{self._pick(_PREPOSITIONS)} the {self._noun_phrase()}")
            else:
                out[-1] += self._pick(_TERMINATORS)
        return " ".join(out)

    def comment(self, shortest: int, longest: int) -> str:
        length = self._rng.randint(shortest, longest)
        start = self._rng.randint(0, len(self._pool) - length)
        return self._pool[start:start + length]


# applying ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RefreshTiming:
    """One refresh function run: wall time from BEGIN to COMMIT and the rows it changed.

    ``lineitems`` is the number inserted (RF1) or deleted (RF2); for RF2 it is the driver's row count, -1 if
    the driver does not report one.
    """

    function: str  # "RF1" or "RF2"
    update_set: int
    nanoseconds: int
    orders: int
    lineitems: int

    @property
    def seconds(self) -> float:
        return self.nanoseconds / 1e9


def placeholder(dialect: Dialect) -> str:
    """The parameter marker of the dialect's driver (``?`` for SQLite, ``%s`` for PyMySQL and psycopg)."""
    return PLACEHOLDERS[dialect.paramstyle]


def insert_sql(table: str, dialect: Dialect) -> str:
    columns = schema.column_names(table)
    marks = ", ".join(placeholder(dialect) for _ in columns)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


def delete_sql(table: str, key_column: str, dialect: Dialect) -> str:
    return f"DELETE FROM {table} WHERE {key_column} = {placeholder(dialect)}"


def _begin(conn: Connection, cur: Any, dialect: Dialect) -> None:
    """Open one explicit transaction whatever the connection's autocommit mode."""
    if dialect.autocommit:
        if not getattr(conn, "in_transaction", False):
            cur.execute(dialect.begin_sql)
    elif getattr(conn, "autocommit", False) is True:  # psycopg opens one itself unless switched to autocommit
        cur.execute("BEGIN")


def _run(conn: Connection, dialect: Dialect,
         steps: Sequence[tuple[str, list[tuple[Any, ...]]]]) -> tuple[int, list[int]]:
    """Run ``executemany`` steps in one transaction; (nanoseconds, row count per step)."""
    cur = conn.cursor()
    counts: list[int] = []
    started = clock.now_ns()
    try:
        _begin(conn, cur, dialect)
        for sql, rows in steps:
            cur.executemany(sql, rows)
            counts.append(cur.rowcount if isinstance(cur.rowcount, int) else -1)
        conn.commit()
    except BaseException:
        try:
            conn.rollback()
        finally:
            cur.close()
        raise
    elapsed = clock.now_ns() - started
    cur.close()
    return elapsed, counts


def apply_rf1(conn: Connection, dialect: Dialect, rs: RefreshSet) -> RefreshTiming:
    """RF1 (new sales): insert the set's orders, then their lineitems, in one transaction."""
    orders, lineitems, _ = rs.params(dialect)
    elapsed, _ = _run(conn, dialect, [(insert_sql("orders", dialect), orders),
                                      (insert_sql("lineitem", dialect), lineitems)])
    return RefreshTiming("RF1", rs.update_set, elapsed, len(orders), len(lineitems))


def apply_rf2(conn: Connection, dialect: Dialect, rs: RefreshSet) -> RefreshTiming:
    """RF2 (old sales): delete the set's orders' lineitems, then the orders, in one transaction."""
    _, _, keys = rs.params(dialect)
    elapsed, counts = _run(conn, dialect, [(delete_sql("lineitem", "l_orderkey", dialect), keys),
                                           (delete_sql("orders", "o_orderkey", dialect), keys)])
    return RefreshTiming("RF2", rs.update_set, elapsed, len(keys), counts[0])


# expected row counts -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RowCounts:
    orders: int
    lineitem: int


def deleted_lineitem_counts(lineitem_tbl: Path, sets: Iterable[RefreshSet]) -> dict[int, int]:
    """Update set -> lineitems of the base orders its RF2 deletes, counted in the base ``lineitem.tbl``.

    The file is read only up to the highest deleted key while it is sorted by order key (dbgen and
    tpchgen-cli write it so); if it is not, it is read to the end.
    """
    wanted: dict[int, int] = {}
    for rs in sets:
        for key in rs.delete_keys:
            wanted[key] = rs.update_set
    counts = {u: 0 for u in set(wanted.values())}
    if not wanted:
        return counts
    highest = max(wanted)
    previous = 0
    ordered = True
    with open(lineitem_tbl, "rb") as handle:
        for line in handle:
            key = int(line[:line.index(b"|")])
            ordered = ordered and key >= previous
            previous = key
            update_set = wanted.get(key)
            if update_set is not None:
                counts[update_set] += 1
            elif ordered and key > highest:
                break
    return counts


def expected_counts(base_orders: int, base_lineitems: int, sets_applied: Iterable[RefreshSet],
                    deleted_lineitems: Mapping[int, int]) -> RowCounts:
    """Orders and lineitem rows after RF1+RF2 of every set in ``sets_applied`` on the base data.

    ``deleted_lineitems`` maps each update set to the base lineitems its RF2 removes
    (:func:`deleted_lineitem_counts`). Orders are unchanged net (RF1 and RF2 move the same number).
    """
    orders, lineitems = base_orders, base_lineitems
    for rs in sets_applied:
        if rs.update_set not in deleted_lineitems:
            raise ValueError(f"no deleted-lineitem count for update set {rs.update_set}")
        orders += len(rs.orders) - len(rs.delete_keys)
        lineitems += len(rs.lineitems) - deleted_lineitems[rs.update_set]
    return RowCounts(orders, lineitems)


def expected_counts_from_data(data_dir: Path, sets_applied: Sequence[RefreshSet]) -> RowCounts:
    """:func:`expected_counts` with base counts from the data's ``manifest.json`` (else the ``.tbl`` files) and
    deleted lineitems from ``lineitem.tbl``."""
    base = {t: _base_rows(data_dir, t) for t in ("orders", "lineitem")}
    deleted = deleted_lineitem_counts(data_dir / "lineitem.tbl", sets_applied)
    return expected_counts(base["orders"], base["lineitem"], sets_applied, deleted)


def _base_rows(data_dir: Path, table: str) -> int:
    """Rows of ``table`` in the base data: from datagen's manifest when it has them, else counted."""
    try:
        return int(json.loads((data_dir / "manifest.json").read_text())["files"][f"{table}.tbl"]["rows"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    rows = 0
    with open(data_dir / f"{table}.tbl", "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            rows += chunk.count(b"\n")
    return rows
