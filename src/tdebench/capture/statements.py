"""Hot statements: grouped by normalized form (sqlglot: literals and parameters become placeholders, IN lists one),
each group with one real statement (literal values as the application sent them), its count and time.

From a log every statement is there with its values. From the server's statistics (performance_schema statement
digests, pg_stat_statements) the digests are ranked by total time with their call counts; their values come from
the log given with ``--log`` or the server's own statement history (``events_statements_history_long``); a
digest whose values are found nowhere is listed as left out, never filled with invented values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tdebench.capture.kinds import SourceKind
from tdebench.sqltext.normal import normalize, parse, statement_kind, tables_of
from tdebench.sqltext.serverlog import Logged
from tdebench.sqltext.tree import exp

#: calls of a write kept beside its first: a write that needs another may take a later call (dependent.py)
SAMPLES = 200


@dataclass
class Group:
    """Statements of one normalized form."""

    key: str
    kind: str  # "query" or "write"
    text: str | None  # one real statement of the group (None: values not found)
    tables: set[str]
    count: int = 0
    seconds: float = 0.0
    sessions: set[str] = field(default_factory=set)
    samples: list[str] = field(default_factory=list)  # a write's first calls (up to SAMPLES), ``text`` first

    @property
    def shape(self) -> str:
        """The statement as capture may show it (console, capture.json): its normalized form, every literal value
        a placeholder."""
        return self.key[:160]


def group_logged(statements: Iterable[Logged], dialect: str, captured: set[str], database: str | None,
                 seen: list[int] | None = None) -> dict[str, Group]:
    """Groups of the logged statements on captured tables (others: session commands, other databases, the
    catalog, are not the application's workload); ``seen[0]`` counts every statement read."""
    groups: dict[str, Group] = {}
    for logged in statements:
        if seen is not None:
            seen[0] += 1
        if database and logged.database and logged.database.lower() != database.lower():
            continue
        tree = parse(logged.text, dialect)
        what = statement_kind(tree) if tree is not None else None
        if tree is None or what is None:
            continue
        tables = tables_of(tree)
        if not tables or not tables <= captured:
            continue
        key = normalize(tree, dialect)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(key, what, tree.sql(dialect=dialect), tables)
        group.count += 1
        if what == "write" and len(group.samples) < SAMPLES:
            group.samples.append(tree.sql(dialect=dialect))
        group.seconds += logged.seconds or 0.0
        group.sessions.add(logged.session)
    return groups


def digest_group(digest_text: str, calls: int, seconds: float, kind: SourceKind, captured: set[str],
                 known: dict[str, Group]) -> Group | None:
    """A statistics row as a group: values from ``known`` (the log or the server's history, by normalized form);
    a digest without placeholders is its own statement. None: not a statement on the captured tables."""
    tree = parse(digest_text.replace("...", "?") if kind.digest_ellipsis else digest_text, kind.sqlglot)
    what = statement_kind(tree) if tree is not None else None
    if tree is None or what is None:
        return None
    tables = tables_of(tree)
    if not tables or not tables <= captured:
        return None
    key = normalize(tree, kind.sqlglot)
    found = known.get(key)
    has_values = any(isinstance(n, (exp.Placeholder, exp.Parameter)) for n in tree.walk())
    text = found.text if found is not None else (None if has_values else tree.sql(dialect=kind.sqlglot))
    return Group(key, what, text, tables, calls, seconds, samples=list(found.samples) if found is not None else [])
