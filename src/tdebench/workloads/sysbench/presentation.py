"""How a sysbench run is shown: transactions per second per thread count, one table per sysbench test
(tdebench.api.presentation)."""

from __future__ import annotations

from collections.abc import Iterable

from tdebench.api.presentation import Presentation, Rate, StepGroup
from tdebench.workloads.oltp_presentation import LATENCIES, OLTP_METRICS, WRITE_COSTS
from tdebench.workloads.sysbench.options import TESTS


def presentation(tests: Iterable[str] = TESTS) -> Presentation:
    """The presentation of a run of ``tests`` (every sysbench test when not known)."""
    return Presentation(
        title="sysbench OLTP",
        layout="rates",
        metrics={**OLTP_METRICS, "tps": "transactions/s"},
        rates=(Rate("tps", "transactions/s", "sysbench transactions per second over the measured window (after "
                                             "ramp-up)."),),
        step_groups=tuple(StepGroup(t, f"sysbench {t} per thread count",
                                    ("tps", *LATENCIES, "server_cpu_per_txn", *WRITE_COSTS)) for t in tests),
    )


PRESENTATION = presentation()
