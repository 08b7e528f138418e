"""How a CRUD run is shown: each operation's time, server CPU and MB/s (tdebench.api.presentation)."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, StepGroup
from tdebench.workloads.crud.ops import TEST

PRESENTATION = Presentation(
    title="CRUD operations",
    layout="steps",
    step_groups=(StepGroup(TEST, "CRUD operations", ("elapsed", "server_cpu", "mb_per_s")),),
)
