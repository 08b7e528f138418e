"""How a load run is shown: loading through the client against the bulk path (tdebench.api.presentation)."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, StepGroup

TEST = "ingest"

PRESENTATION = Presentation(
    title="Loading through the client vs the bulk path",
    layout="steps",
    step_groups=(StepGroup(TEST, "Loading through the client vs the bulk path", ("elapsed", "rows_per_s")),),
)
