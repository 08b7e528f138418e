"""Faults injected into a measured trial (``--fault``): what to do, when, to which part of the instance.

``kill-node@WHEN[,block=N][,node=K][,rejoin=ist|sst]``: SIGKILL one node of every config's cluster ``WHEN`` into
its trial of measured block ``N`` (default 1), then start it again so that it rejoins by IST (the missed write
sets from a donor's gcache; default) or by a whole state transfer (``sst``: its data directory deleted first).
``WHEN`` is a share of the trial's planned length (``50%``) or seconds from its start (``20s``). ``node`` is 2..N
(node 1 serves the workload); default: the last node. Engines declare the kinds they can suffer in
:attr:`tdebench.api.engine.Engine.faults`; docs/faults.md says what a run records.

``keyserver-down@WHEN[,block=N][,mode=stop|seal]``: the run's key server stopped (``seal``: sealed, so that it
answers 503) ``WHEN`` into the trials of measured block ``N`` of the configs whose keys live on it, and kept down
until each trial ends; then their servers are restarted while it is down (a restart must fail), it comes back, and
the rows are counted and checksummed against what they were before (docs/faults.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tdebench.errors import UsageError

KILL_NODE = "kill-node"
KEYSERVER_DOWN = "keyserver-down"
KINDS = (KILL_NODE, KEYSERVER_DOWN)
REJOINS = ("ist", "sst")
OUTAGES = ("stop", "seal")
_WHEN = re.compile(r"^(\d+(?:\.\d+)?)\s*(%|s)$")
FORMAT = ("kill-node@50% (or @20s), optionally followed by ,block=N ,node=K ,rejoin=ist|sst; or "
          "keyserver-down@50%, optionally followed by ,block=N ,mode=stop|seal")


@dataclass(frozen=True)
class Fault:
    """One parsed ``--fault``."""

    kind: str
    share: float | None = None      # of the trial's planned length, 0 < share < 1
    seconds: float | None = None    # from the start of the trial
    block: int = 1
    node: int | None = None         # None: the last node
    rejoin: str = "ist"
    mode: str = "stop"              # keyserver-down: stop the key server, or seal it

    def __str__(self) -> str:
        when = f"{self.share * 100:g}%" if self.share is not None else f"{self.seconds:g}s"
        if self.kind == KEYSERVER_DOWN:
            return f"{self.kind}@{when},block={self.block},mode={self.mode}"
        node = f",node={self.node}" if self.node is not None else ""
        return f"{self.kind}@{when},block={self.block}{node},rejoin={self.rejoin}"

    def at_seconds(self, planned: float | None) -> float | None:
        """Seconds from the start of the trial; None when a share is asked and the length is unknown."""
        if self.seconds is not None:
            return self.seconds
        return None if planned is None or self.share is None else self.share * planned


def _bad(text: str, what: str) -> UsageError:
    return UsageError(f"bad --fault '{text}': {what}", f"give e.g. --fault {FORMAT}")


def parse_fault(text: str) -> Fault:
    """``--fault`` text -> :class:`Fault`; UsageError naming what is wrong."""
    head, *extras = [p.strip() for p in str(text).split(",")]
    kind, sep, when = head.partition("@")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise _bad(text, f"unknown fault '{kind}' (known: {', '.join(KINDS)})")
    match = _WHEN.match(when.strip().lower()) if sep else None
    if match is None:
        raise _bad(text, "say when, as a share of the trial (@50%) or seconds from its start (@20s)")
    value = float(match.group(1))
    if match.group(2) == "%" and not 0 < value < 100:
        raise _bad(text, "the share must lie between 0% and 100% of the trial")
    fields: dict[str, object] = {"share": value / 100} if match.group(2) == "%" else {"seconds": value}
    node_options = kind == KILL_NODE
    for extra in extras:
        key, sep, value_text = (s.strip().lower() for s in extra.partition("="))
        if key in ("block", "node")[:2 if node_options else 1] and sep and value_text.isdigit() \
                and int(value_text) >= 1:
            fields[key] = int(value_text)
        elif node_options and key == "rejoin" and value_text in REJOINS:
            fields[key] = value_text
        elif not node_options and key == "mode" and value_text in OUTAGES:
            fields[key] = value_text
        else:
            allowed = ("block=N, node=K (whole numbers from 1) or rejoin=ist|sst" if node_options
                       else "block=N (a whole number from 1) or mode=stop|seal")
            raise _bad(text, f"'{extra}' is not {allowed}")
    return Fault(kind, **fields)  # type: ignore[arg-type]


def outage_text(facts: dict[str, Any]) -> str:
    """What the database did while its key server was down (``keyserver-down``'s facts), in one phrase."""
    served = (f"failed {facts['first_error_after_s']} s after" if "first_error_after_s" in facts
              else f"served all {facts.get('probes_ok', 0)} probes")
    restart = ("a restart meanwhile was refused: " + str(facts.get("restart_message")) if facts.get("restart_refused")
               else str(facts.get("restart_message", "")))
    equal = facts.get("rows_equal")
    rows = "rows and checksums equal" if equal is True else "ROWS DIFFER" if equal is False else str(equal)
    return f"went down; the database {served}; {restart}; {rows} once it was back"
