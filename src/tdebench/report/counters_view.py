"""The engines' own counters (``test = counters`` rows) as the report reads them: per config and step, the median
over trials of each counter; the cache hit ratio; what crossed the encryption boundary.

* hit ratio = 1 − cache_misses / cache_requests (read-ahead counts among the misses; clamped to 0–100%: InnoDB's
  read-ahead can read pages nobody requested yet);
* decrypted / encrypted = ``bytes_decrypted`` / ``bytes_encrypted`` where the engine counts them exactly, else the
  engine's ``*_estimate`` counters (marked "≈"); None where neither exists.

A step's counters cover the marked span of the step (``ConfigState.mark``); the ``total`` of the TPC-H tests is the
sum over their query steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tdebench.report.fmt import DASH, fmt_bytes
from tdebench.stats.load import Measurements
from tdebench.stats.metrics import query_number

TEST = "counters"
ESTIMATES = {"bytes_decrypted": "bytes_decrypted_estimate", "bytes_encrypted": "bytes_encrypted_estimate"}


@dataclass(frozen=True)
class Crossing:
    """Bytes that crossed the encryption boundary during a step (median over trials)."""

    decrypted: float | None
    encrypted: float | None
    estimate: bool = False

    @property
    def known(self) -> bool:
        return self.decrypted is not None or self.encrypted is not None

    def text(self) -> str:
        """``201 MiB decrypted, 0 B encrypted`` (``≈`` before an estimate), or a dash."""
        if not self.known:
            return DASH
        mark = "≈" if self.estimate else ""
        parts = [f"{mark}{fmt_bytes(v)} {what}" for v, what in ((self.decrypted, "decrypted"),
                                                                (self.encrypted, "encrypted")) if v is not None]
        return ", ".join(parts)


class CounterIndex:
    """Medians of the counters rows of one run."""

    def __init__(self, m: Measurements) -> None:
        self._medians: dict[tuple[str, str, str], float] = {}
        self._steps: dict[str, list[str]] = {}
        for key, sample in m.series.items():
            if key.test != TEST or sample.n == 0:
                continue
            self._medians[(key.config, key.step, key.metric)] = float(np.median(sample.values))
            steps = self._steps.setdefault(key.config, [])
            if key.step not in steps:
                steps.append(key.step)

    def __bool__(self) -> bool:
        return bool(self._medians)

    def configs(self) -> list[str]:
        return list(self._steps)

    def steps(self, config: str) -> list[str]:
        """Steps with counters of ``config``, in the order first seen."""
        return list(self._steps.get(config, []))

    def _query_steps(self, config: str) -> list[str]:
        return [s for s in self._steps.get(config, []) if query_number(s) is not None]

    def value(self, config: str, step: str, metric: str) -> float | None:
        """The median of one counter; for step ``total``, the sum over the query steps (None if none has it)."""
        if step == "total" and (config, "total", metric) not in self._medians:
            values = [self._medians.get((config, s, metric)) for s in self._query_steps(config)]
            known = [v for v in values if v is not None]
            return float(sum(known)) if known else None
        return self._medians.get((config, step, metric))

    def hit_ratio(self, config: str, step: str) -> float | None:
        """Fraction of page requests the engine's cache served (None without both counters)."""
        requests = self.value(config, step, "cache_requests")
        misses = self.value(config, step, "cache_misses")
        if requests is None or misses is None or requests <= 0:
            return None
        return min(1.0, max(0.0, 1.0 - misses / requests))

    def crossing(self, config: str, step: str) -> Crossing:
        """Bytes decrypted and encrypted during ``step``: counted, else estimated, else unknown."""
        exact = (self.value(config, step, "bytes_decrypted"), self.value(config, step, "bytes_encrypted"))
        if exact != (None, None):
            return Crossing(*exact)
        estimate = (self.value(config, step, ESTIMATES["bytes_decrypted"]),
                    self.value(config, step, ESTIMATES["bytes_encrypted"]))
        return Crossing(*estimate, estimate=True) if estimate != (None, None) else Crossing(None, None)

    def brief(self, config: str, step: str) -> str:
        """``hit 97.1% · 12.0 MiB decrypted`` for a table cell's small text ("" when nothing is counted)."""
        parts = []
        hit = self.hit_ratio(config, step)
        if hit is not None:
            parts.append(f"hit {fmt_hit(hit)}")
        crossing = self.crossing(config, step)
        if crossing.decrypted is not None:
            parts.append(f"{'≈' if crossing.estimate else ''}{fmt_bytes(crossing.decrypted)} decrypted")
        if crossing.encrypted:
            parts.append(f"{'≈' if crossing.estimate else ''}{fmt_bytes(crossing.encrypted)} encrypted")
        values = self.value(config, step, "values_read_encrypted")
        if values is not None:
            parts.append(f"≤{values:,.0f} values decrypted")
        return " · ".join(parts)


def fmt_hit(ratio: float | None) -> str:
    """``97.1%``; ``100%`` only when nothing missed; a dash for None."""
    if ratio is None:
        return DASH
    if ratio >= 1.0:
        return "100%"
    return f"{min(ratio * 100, 99.99):.2f}%" if ratio > 0.999 else f"{ratio * 100:.1f}%"
