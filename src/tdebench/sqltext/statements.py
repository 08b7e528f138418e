"""SQL text split into statements and parsed (a syntax check naming line and column) in a family's dialect, and
the tables a statement reads or writes. The sql workload hands the statements of a user's files to the engines
exactly as written (comments and the ``;`` dropped); sqlglot only checks them."""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from tdebench.sqltext.dialects import family_sqlglot


class SqlSyntaxError(ValueError):
    """The text does not parse; ``str()`` says where (line, column) and what sqlglot expected."""


@dataclass(frozen=True)
class Statement:
    """One statement: its text as written and what sqlglot made of it."""

    text: str
    tree: exp.Expression | None


def _reason(error: ParseError | TokenError) -> tuple[str, int | None, int | None]:
    """(what sqlglot expected, line, column) of a parse error, in words a user reads."""
    if isinstance(error, ParseError) and error.errors:
        first = error.errors[0]
        reason = str(first.get("description") or "").strip() or str(error).splitlines()[0]
        reason = re.sub(r"<Token token_type: TokenType\.SENTINEL.*", "the end of the statement", reason)
        reason = re.sub(r"<Token token_type: TokenType\.\w+, text: ([^,]*),.*", r"'\1'", reason)
        reason = re.sub(r"Required keyword: '\w+' missing for <class '[\w.]*?(\w+)'>",
                        lambda m: f"an incomplete {m.group(1).upper()} (something is missing after it)", reason)
        return reason, first.get("line"), first.get("col")
    return (str(error).splitlines()[0] if str(error) else type(error).__name__), None, None


def _pieces(text: str, family: str) -> list[tuple[str, int]]:
    """(statement without comments or its ``;``, offset of its first character) for every statement."""
    try:
        tokens = sqlglot.tokenize(text, read=family_sqlglot(family))
    except TokenError as exc:
        raise SqlSyntaxError(_reason(exc)[0]) from None
    out: list[tuple[str, int]] = []
    parts: list[str] = []
    start = previous_end = -1
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if parts:
                out.append(("".join(parts), start))
            parts, previous_end = [], -1
            continue
        if previous_end < 0:
            start = token.start
        else:
            gap = text[previous_end + 1:token.start]
            parts.append(gap if not gap.strip() else ("\n" if "\n" in gap else " "))  # a comment: dropped
        parts.append(text[token.start:token.end + 1])
        previous_end = token.end
    if parts:
        out.append(("".join(parts), start))
    return out


def split_statements(text: str, family: str) -> list[str]:
    """The statements of ``text`` as written, without comments or the ``;`` that ends them (engines that take
    statements apart, e.g. PostgreSQL column encryption, must not meet a comment inside one)."""
    return [piece for piece, _ in _pieces(text, family)]


def parse_statements(text: str, family: str) -> list[Statement]:
    """Every statement of ``text``, parsed in ``family``'s dialect; SqlSyntaxError naming line and column
    (counted in the file)."""
    dialect = family_sqlglot(family)
    out = []
    for piece, start in _pieces(text, family):
        try:
            tree = sqlglot.parse_one(piece, read=dialect)
        except (ParseError, TokenError) as exc:
            reason, line, col = _reason(exc)
            first_line = text.count("\n", 0, start)
            if line is None:
                raise SqlSyntaxError(f"line {first_line + 1}: {reason}") from None
            # comments dropped inside the statement keep their newlines, so its lines are the file's
            column = col if line > 1 else (col or 0) + start - (text.rfind("\n", 0, start) + 1)
            raise SqlSyntaxError(f"line {first_line + line}, column {column}: {reason}") from None
        out.append(Statement(piece, tree))
    return out


def tables_used(tree: exp.Expression) -> set[str]:
    """Lower-case names of the tables (and views) a statement reads or writes, without its CTE names."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    names = set()
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        if name and name not in ctes and not isinstance(table.this, exp.Func):
            names.add(name)
    return names


def tables_written(tree: exp.Expression) -> set[str]:
    """Lower-case names of the tables an INSERT, UPDATE, DELETE or MERGE changes."""
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        target = tree.this
        if isinstance(target, exp.Schema):  # INSERT INTO t (a, b)
            target = target.this
        if isinstance(target, exp.Table) and target.name:
            return {target.name.lower()}
    return set()


def is_query(tree: exp.Expression | None) -> bool:
    """True for a statement that returns rows (SELECT, WITH ... SELECT, UNION, VALUES)."""
    return isinstance(tree, (exp.Query, exp.Values))
