"""TPC-H's official metrics (spec 5.4): Power@Size, Throughput@Size, QphH@Size.

The spec's reporting rules are applied to copies of the timings; callers keep the raw times for overhead
analysis:

* every timing interval is reported to 0.1 s (rounded half up), and an interval under 0.05 s counts as 0.1 s
  (:func:`round_interval`);
* in the power test, if the longest query interval is more than 1000 times the shortest, every query interval
  below max/1000 counts as max/1000 (RF intervals are not clamped);
* Power@Size = 3600·SF / (Π of the 22 query intervals · RF1 · RF2)^(1/24);
* Throughput@Size = S·22·3600 / Ts · SF, with Ts (the throughput test's wall time) reported to 0.1 s;
* QphH@Size = sqrt(Power@Size · Throughput@Size).

At small scale factors many queries take well under 0.05 s, so the 0.1 s floor dominates and Power@Size says
little about the DBMS; that is the spec's metric, and why raw times are kept beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

QUERIES = tuple(range(1, 23))
RESOLUTION = Decimal("0.1")
FLOOR_BELOW = 0.05  # intervals under this count as 0.1 s
MAX_RATIO = 1000  # longest / shortest query interval before clamping


def _check_seconds(name: str, seconds: float) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
            or seconds < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, not {seconds!r}")
    return float(seconds)


def _check_sf(sf: float) -> float:
    if isinstance(sf, bool) or not isinstance(sf, (int, float)) or not math.isfinite(sf) or sf <= 0:
        raise ValueError(f"scale factor must be > 0, not {sf!r}")
    return float(sf)


def round_interval(seconds: float) -> float:
    """A timing interval as the spec reports it: to 0.1 s, half up; under 0.05 s it counts as 0.1 s."""
    value = _check_seconds("interval", seconds)
    if value < FLOOR_BELOW:
        return 0.1
    return float(Decimal(repr(value)).quantize(RESOLUTION, rounding=ROUND_HALF_UP))


def power_intervals(query_seconds: Mapping[int, float], rf1: float,
                    rf2: float) -> tuple[dict[int, float], float, float]:
    """The 22 query intervals and the two RF intervals after rounding and the max/1000 clamp."""
    if set(query_seconds) != set(QUERIES):
        missing = sorted(set(QUERIES) - set(query_seconds))
        extra = sorted(set(query_seconds) - set(QUERIES), key=str)
        raise ValueError(f"the power test needs exactly queries 1..22 (missing: {missing or 'none'}, "
                         f"unexpected: {extra or 'none'})")
    queries = {q: round_interval(_check_seconds(f"Q{q} time", query_seconds[q])) for q in QUERIES}
    longest = max(queries.values())
    if longest > MAX_RATIO * min(queries.values()):
        floor = longest / MAX_RATIO
        queries = {q: max(v, floor) for q, v in queries.items()}
    return queries, round_interval(rf1), round_interval(rf2)


def power_at_size(query_seconds: Mapping[int, float], rf1: float, rf2: float, sf: float) -> float:
    """Power@Size from the power test's raw query times (seconds, keyed 1..22) and RF1/RF2 times."""
    scale = _check_sf(sf)
    queries, r1, r2 = power_intervals(query_seconds, rf1, rf2)
    logs = [math.log(v) for v in queries.values()] + [math.log(r1), math.log(r2)]
    return 3600.0 * scale / math.exp(math.fsum(logs) / len(logs))


def throughput_at_size(streams: int, ts_seconds: float, sf: float) -> float:
    """Throughput@Size = S·22·3600 / Ts · SF, Ts (throughput test wall time) reported to 0.1 s."""
    if isinstance(streams, bool) or not isinstance(streams, int) or streams < 1:
        raise ValueError(f"streams must be an integer >= 1, not {streams!r}")
    ts = round_interval(_check_seconds("throughput test time", ts_seconds))
    return streams * len(QUERIES) * 3600.0 / ts * _check_sf(sf)


def qphh_at_size(power: float, throughput: float) -> float:
    """QphH@Size = sqrt(Power@Size · Throughput@Size)."""
    for name, value in (("Power@Size", power), ("Throughput@Size", throughput)):
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number, not {value!r}")
    return math.sqrt(power * throughput)
