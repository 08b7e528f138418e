"""Answers of a user's queries: normalized as TPC-H's are, compared as multisets with a float tolerance.

Values are normalized by :func:`tdebench.workloads.tpch.answers.normalize_row` (NULL -> "", dates ISO, floats and
decimals to two places, integral decimals as integers, text trimmed). Rows are sorted, so a query without a
total ORDER BY compares equal whatever order an engine returns its rows in. Two cells match when their texts are
equal, or both are numbers within 0.01 (the rounding of the normalization) or within a relative 1e-9.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from tdebench.workloads.tpch.answers import normalize_row

MAX_MISMATCHES = 5
_CENT = Decimal("0.01")

AnswerSet = dict[str, list[list[str]]]  # step name -> normalized, sorted rows


def normalize(rows: Iterable[Iterable[Any]]) -> list[list[str]]:
    """Rows as sorted lists of answer text."""
    return sorted(normalize_row(r) for r in rows)


def digest(rows: Sequence[Sequence[str]]) -> str:
    """A hash of normalized rows (equal answers, equal hashes)."""
    return hashlib.sha256("\n".join("|".join(r) for r in rows).encode()).hexdigest()


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def cells_match(expected: str, actual: str) -> bool:
    """Equal text, or two numbers within the tolerance."""
    if expected == actual:
        return True
    e, a = _number(expected), _number(actual)
    if e is None or a is None:
        return False
    return abs(e - a) <= _CENT or abs(e - a) <= abs(e) * Decimal("1e-9")


def compare(step: str, expected: Sequence[Sequence[str]], actual: Sequence[Sequence[str]]) -> list[str]:
    """Differences between two answers of ``step`` (empty when equal within the tolerance)."""
    if len(expected) != len(actual):
        return [f"{step}: expected {len(expected)} rows, got {len(actual)}"]
    problems = []
    for i, (exp_row, act_row) in enumerate(zip(expected, actual), 1):
        if len(exp_row) != len(act_row):
            problems.append(f"{step} row {i}: expected {len(exp_row)} columns, got {len(act_row)}")
            continue
        for j, (e, a) in enumerate(zip(exp_row, act_row), 1):
            if not cells_match(e, a):
                problems.append(f"{step} row {i} column {j}: expected {e or 'NULL'}, got {a or 'NULL'}")
    if len(problems) > MAX_MISMATCHES:
        problems = problems[:MAX_MISMATCHES] + [f"{step}: ... and {len(problems) - MAX_MISMATCHES} more differences"]
    return problems


def compare_sets(expected: AnswerSet, actual: AnswerSet) -> list[str]:
    """Mismatches between two configs' answers (a query without an answer is one)."""
    problems: list[str] = []
    for step in expected:
        if step not in actual:
            problems.append(f"{step}: no answer")
        else:
            problems.extend(compare(step, expected[step], actual[step]))
    return problems


def verdicts(sets: dict[str, AnswerSet], plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    """Per config: are its answers those of its plain twin?"""
    out: dict[str, dict[str, Any]] = {}
    for label, answer_set in sets.items():
        verdict: dict[str, Any] = {"queries_answered": len(answer_set)}
        twin = plain_of.get(label)
        if twin and twin != label and twin in sets:
            problems = compare_sets(sets[twin], answer_set)
            verdict.update(compared_with=twin, equal_to_plain=not problems, plain_mismatches=problems[:10])
        verdict["answers_equal"] = verdict.get("equal_to_plain")
        out[label] = verdict
    return out
