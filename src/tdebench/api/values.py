"""Option values that list several numbers: ``"5,10,15"`` (text, comma-separated), one number, or a list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

N = TypeVar("N", int, float)


def numbers(value: Any, convert: Callable[[Any], N], what: str, scalars: tuple[type, ...] = (int,)) -> list[N]:
    """Each item of ``value`` (text split at commas, blanks dropped; one of ``scalars``; or a list) through
    ``convert``, in the given order; ValueError ``'<item>' is not <what>`` for the first that does not convert."""
    if isinstance(value, bool):
        raise ValueError(f"'{value}' is not {what}")
    if isinstance(value, scalars):
        items: list[Any] = [value]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [p.strip() for p in str(value).split(",") if p.strip()]
    out: list[N] = []
    for item in items:
        try:
            out.append(convert(item))
        except (TypeError, ValueError):
            raise ValueError(f"'{item}' is not {what}") from None
    return out


def counts(value: Any, option: str, maximum: int, example: str) -> list[int]:
    """:func:`numbers` for whole numbers from 1 to ``maximum`` (``example``: a value to give instead)."""
    out = numbers(value, int, f"a whole number; give e.g. {example}")
    wrong = next((n for n in out if not 1 <= n <= maximum), None)
    if wrong is not None:
        raise ValueError(f"{option} must be between 1 and {maximum}, not {wrong}")
    return out
