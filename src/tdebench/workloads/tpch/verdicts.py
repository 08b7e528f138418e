"""TPC-H answer equality: every config's query answers must equal the plain twin's and the reference."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.workloads.tpch import answers

AnswerSet = dict[int, list[list[str]]]  # query number -> normalized rows


def compare_sets(expected: AnswerSet, actual: AnswerSet) -> list[str]:
    """Mismatch descriptions between two answer sets (empty = equal); a missing query is a mismatch."""
    problems: list[str] = []
    for number in sorted(expected):
        if number not in actual:
            problems.append(f"q{number:02d}: no answer")
            continue
        problems.extend(answers.compare_answers(number, expected[number], actual[number]))
    return problems


def load_reference(sf: float) -> AnswerSet | None:
    """The bundled reference answers for ``sf``, if tdebench ships them."""
    ref = answers.reference_dir(sf)
    if ref is None:
        return None
    out: AnswerSet = {}
    for path in sorted(Path(ref).glob("q*.csv")):
        _, rows = answers.read_answer_csv(path)
        out[int(path.stem[1:])] = rows
    return out


def twin_verdict(label: str, sets: dict[str, Any], plain_of: dict[str, str | None],
                 compare: Callable[[Any, Any], list[str]]) -> dict[str, Any]:
    """How many queries ``label`` answered and, when it has a plain twin, whether ``compare`` finds their answer
    sets equal (the first mismatches)."""
    verdict: dict[str, Any] = {"queries_answered": len(sets[label])}
    twin = plain_of.get(label)
    if twin and twin != label and twin in sets:
        problems = compare(sets[twin], sets[label])
        verdict.update(compared_with=twin, equal_to_plain=not problems, plain_mismatches=problems[:10])
    return verdict


def answer_verdicts(sets: dict[str, AnswerSet], plain_of: dict[str, str | None],
                    reference: AnswerSet | None, sf: float) -> dict[str, dict[str, Any]]:
    """Per config: equality with its plain twin and with the reference answers (when known)."""
    verdicts: dict[str, dict[str, Any]] = {}
    for label, answer_set in sets.items():
        verdict = twin_verdict(label, sets, plain_of, compare_sets)
        if reference is not None:
            problems = compare_sets(reference, answer_set)
            verdict.update(reference=f"TPC-H SF {sf:g} (bundled)", equal_to_reference=not problems,
                           reference_mismatches=problems[:10])
        checks = [v for k, v in verdict.items() if k in ("equal_to_plain", "equal_to_reference")]
        verdict["answers_equal"] = all(checks) if checks else None
        verdicts[label] = verdict
    return verdicts
