"""How a TPC-H run is shown: the power test's total, its queries one by one, the official metrics
(tdebench.api.presentation)."""

from __future__ import annotations

from tdebench.api.presentation import Headline, Presentation, Section

POWER = "power"
POWER_TOTAL = Headline("headline", POWER, "total", "elapsed", "total of its query times")

PRESENTATION = Presentation(
    title="TPC-H power test (stream 0)",
    headlines=(POWER_TOTAL,),
    layout="totals",
    metrics={"power_at_size": "Power@Size", "qphh_at_size": "QphH@Size", "throughput_at_size": "Throughput@Size"},
    figures={"power_at_size": "Power@Size", "qphh_at_size": "QphH@Size"},
    sections=(Section("queries", "power test", test=POWER),),
    notes={
        "cipher_floor": "The total row covers the 22 queries of the power test.",
        "query_schedule": "The steps are the 22 queries of the power test's stream 0; RF1, RF2, the official "
                          "metrics and the throughput test kept the block as their unit, per config in the block's "
                          "order. Each config recorded one time per query and block and their total, so one pass "
                          "over the 22 queries is one paired observation of the power total.",
    },
)
