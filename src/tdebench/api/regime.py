"""The memory regime: the engine's cache size relative to the loaded data, a swept axis of a run.

``--memory-ratio 0.05,0.25,1,2`` runs every config at each ratio in turn: before the first trial at a ratio,
each instance's own cache (InnoDB's buffer pool, PostgreSQL's shared_buffers, SQLite's page cache) is set to
ratio × the loaded data of its engine's plain twin, the same number of bytes for every twin. The ratio is carried
by the config label of the rows measured under it (``mariadb-tde-aes-256-ctr@mem0.25``), so every table,
overhead and chart treats each (config, ratio) as one arm, paired with the plain twin at the same ratio.
"""

from __future__ import annotations

import math
import re
from typing import Any

from tdebench.api.values import numbers
from tdebench.errors import UsageError

#: where a page the swept cache misses comes from (``--page-source``): ``disk``, the storage (the OS page cache
#: bypassed or bounded), or ``memory``, the OS page cache holding the whole data (the cost of crossing the
#: encryption boundary without the device's latency)
PAGE_SOURCES = ("disk", "memory")
#: what separates a config's label from the ratio it ran at
SUFFIX = "@mem"
_LABEL = re.compile(r"^(?P<base>.+)@mem(?P<ratio>\d+(?:\.\d+)?(?:e[-+]?\d+)?)$")
#: a cache this small is no cache at all (an engine's minimum is larger); smaller ratios are refused
MIN_RATIO = 0.001
MAX_RATIOS = 12
_FIX = "give cache/data ratios > 0 separated by commas, e.g. --memory-ratio 0.05,0.25,1,2"


def ratios_or_reason(value: Any) -> tuple[float, ...]:
    """``"0.05,0.25,1,2"``, ``0.5`` or ``[0.1, 2]`` -> (0.05, 0.25, 1.0, 2.0) in the given order; ValueError saying
    what is wrong if a value is not a finite number of at least :data:`MIN_RATIO`, is listed twice, or there are
    none."""
    if value is None:
        return ()
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a cache/data ratio")
    ratios = numbers(value, float, "a number", (int, float))
    wrong = next((r for r in ratios if not math.isfinite(r) or r < MIN_RATIO), None)
    if wrong is not None:
        raise ValueError(f"'{wrong:g}' is not a cache/data ratio (it must be a number of at least {MIN_RATIO:g})")
    if not ratios:
        raise ValueError("no ratio given")
    if len({ratio_text(r) for r in ratios}) != len(ratios):  # labels carry ratio_text: it must tell them apart
        raise ValueError("a ratio is listed twice")
    if len(ratios) > MAX_RATIOS:
        raise ValueError(f"{len(ratios)} ratios listed; at most {MAX_RATIOS}")
    return tuple(ratios)


def parse_ratios(value: Any, option: str = "--memory-ratio") -> tuple[float, ...]:
    """:func:`ratios_or_reason`, with a UsageError naming ``option``."""
    try:
        return ratios_or_reason(value)
    except ValueError as exc:
        raise UsageError(f"bad value for {option}: {exc}", _FIX) from None


def ratio_text(ratio: float) -> str:
    """``0.25`` -> ``0.25``; ``2.0`` -> ``2``."""
    return f"{ratio:g}"


def regime_label(label: str, ratio: float | None) -> str:
    """The label rows measured at ``ratio`` carry: ``mariadb-none@mem0.25`` (``label`` itself without a ratio)."""
    return label if ratio is None else f"{label}{SUFFIX}{ratio_text(ratio)}"


def split_label(label: str) -> tuple[str, float | None]:
    """``mariadb-none@mem0.25`` -> (``mariadb-none``, 0.25); a label without a ratio -> (label, None)."""
    match = _LABEL.match(label)
    if not match:
        return label, None
    return match.group("base"), float(match.group("ratio"))


def ratio_of(label: str) -> float | None:
    """The memory ratio a config label carries, or None."""
    return split_label(label)[1]


def loaded_bytes(entry: dict[str, Any]) -> int:
    """The data loaded into a manifest ``configs`` entry: tables + indexes from the engine's catalog
    (``storage.totals.total_bytes``), else the files' size (``storage_bytes``); 0 when neither is known."""
    storage = entry.get("storage") if isinstance(entry.get("storage"), dict) else {}
    totals = storage.get("totals") if isinstance(storage.get("totals"), dict) else {}
    total = totals.get("total_bytes")
    if isinstance(total, (int, float)) and total > 0:
        return int(total)
    value = entry.get("storage_bytes")
    return int(value) if isinstance(value, (int, float)) and value > 0 else 0
