"""Switching encryption on (and off) in place: how an engine does it for one spec, and what it reports of its
progress.

An instance whose engine can switch its spec returns a :class:`~tdebench.api.switcher.Switcher` from
:meth:`tdebench.api.engine.Instance.switcher` (the ``encrypt`` workload: docs/workloads/encrypt.md); the
:class:`SwitchMethod` of one spec (:meth:`tdebench.api.engine.Engine.switch_method`) is that switcher class's
description (:meth:`~tdebench.api.switcher.Switcher.describe`), and :meth:`~tdebench.api.switcher.Switcher.progress`
reports a :class:`SwitchProgress`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SwitchMethod:
    """How an engine brings plaintext data to one encrypted spec, and back."""

    #: True: while the database serves (an :class:`~tdebench.api.switcher.OnlineSwitcher`); False: with no
    #: workload connected (an :class:`~tdebench.api.switcher.OfflineSwitcher`), the service stopped meanwhile
    online: bool
    #: the method in the engine's own words
    method: str
    #: what an online switch needs a restart for, before it (loading a key plugin, encrypting a redo log) and
    #: after the way back (unloading it): :class:`~tdebench.api.switcher.Restarting`; "": none
    restart: str = ""
    #: how existing encrypted data is re-encrypted under a new key (:class:`~tdebench.api.switcher.Rekeying`);
    #: "": it cannot be
    rekey: str = ""
    #: True: the re-keying runs while serving (that of an online switcher); False: offline
    rekey_online: bool = False
    #: the switch covers every database of the server (:attr:`~tdebench.api.switcher.Switcher.whole_server`)
    whole_server: bool = False
    #: the offline switch copies the data into another place: the old copy stays, in the clear, until
    #: :meth:`~tdebench.api.switcher.Copying.remove_old_copy` wipes it
    copies: bool = False


@dataclass(frozen=True)
class SwitchProgress:
    """Where the engine's own switch stands, from the engine's own status (never a guess from elapsed time)."""

    #: True when the engine reports every unit (e.g. tablespace) in the target state and no work pending
    done: bool
    #: units in the target state (encrypted when switching on, plaintext when switching off)
    in_target: int
    #: units the engine knows of
    total: int
    #: units still being worked on (names, at most a few)
    pending: tuple[str, ...] = ()
    #: further facts from the engine (e.g. tablespaces pending), numbers only
    detail: dict[str, Any] = field(default_factory=dict)
    #: the engine's cumulative counts of switching work (e.g. pages rotated since the server started): the
    #: workload records how much each grew during a switch
    counters: dict[str, float] = field(default_factory=dict)
    #: which of ``counters`` grow only while the switch advances: when neither they nor ``in_target`` move for a
    #: while, the switch is stalled (the workload then asks for it again)
    progress_counters: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.progress_counters) - set(self.counters)
        if unknown:  # an engine's mistake: a stall would be detected from a counter never read
            raise ValueError(f"progress counters not among the counters: {sorted(unknown)}")

    @property
    def fraction(self) -> float:
        """Share of the units in the target state (0 when the engine knows of none)."""
        return self.in_target / self.total if self.total else 0.0
