"""How a run of a user's own SQL is shown: each query and write, and their weighted total
(tdebench.api.presentation). The headlines are the run's own (:meth:`SqlWorkload.headlines`)."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, StepGroup

TEST = "sql"

PRESENTATION = Presentation(
    title="Your queries and writes",
    layout="steps",
    step_groups=(StepGroup(TEST, "Your queries and writes (workload sql; total = weighted sum)",
                           ("elapsed", "mean_elapsed")),),
    metrics={"elapsed": "elapsed (per statement: the geometric mean of its visits)",
             "mean_elapsed": "elapsed, the mean of every execution (stalls included)"},
)
