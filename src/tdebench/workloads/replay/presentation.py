"""How a replayed log is shown: per statement form the sum of its latencies and its percentiles, the wall time
of the whole replay (tdebench.api.presentation)."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, StepGroup

TEST = "replay"

PRESENTATION = Presentation(
    title="The replayed log",
    layout="steps",
    metrics={"failed": "failed statements"},
    step_groups=(StepGroup(TEST, "The replayed log per statement form (elapsed = sum of its latencies; "
                                 "total = wall time)",
                           ("elapsed", "latency_p50", "latency_p95", "latency_p99", "failed")),),
)
