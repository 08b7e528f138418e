"""How a workload presents its results: the figures it reports first (its headlines).

A workload declares them; the manifest's plan carries them, so that ``tdebench report`` rebuilds a run from the run
directory alone, and the runner's ``--precision`` rule watches them by name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Headline:
    """One figure a workload reports first, e.g. the weighted total time of a user's reads.

    ``name`` is unique within the workload (what ``--precision-metric`` and the manifest call it); ``test``,
    ``step`` and ``metric`` name its series in measurements.csv; ``title`` is what a DBA reads."""

    name: str
    test: str
    step: str
    metric: str
    title: str
    higher_is_better: bool = False

    @property
    def series(self) -> tuple[str, str, str]:
        return (self.test, self.step, self.metric)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Headline:
        return cls(**{k: data[k] for k in ("name", "test", "step", "metric", "title") if k in data},
                   higher_is_better=bool(data.get("higher_is_better", False)))
