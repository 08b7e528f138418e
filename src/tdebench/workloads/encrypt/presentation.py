"""How an encrypt run is shown: the switching table, each switch against the steady phase before it
(tdebench.api.presentation). There is no plain twin: each cycle is its own baseline."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, Section

TEST = "encrypt"

PRESENTATION = Presentation(
    title="Switching encryption on",
    layout="switching",
    sections=(Section("switching", "Switching", test=TEST),),
)
