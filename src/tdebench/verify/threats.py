"""The threat model per config: which attacker each encryption setup stops, with the scans that show it.

One row per attacker, each the result of a check run on the live instance (:mod:`tdebench.verify.threat_checks`
with the probes the instance returns, :meth:`tdebench.api.engine.Instance.threats`); what each row means and how
it is checked is in docs/security.md. A row's status is one of :data:`STATUSES`; its evidence names files, sizes
and hits per marker *name* (``canary-1``, ``known:<TPC-H text>``), never a canary value, key or password.

The runner calls :meth:`ThreatModel.assess` right after the at-rest scan (before any trial) and
:meth:`ThreatModel.finish` after the last trial, before the instances are destroyed: the statement logs and
temporary directories are scanned again (the workload's own statements and spills are in them by then) and the
backup workload's verdicts (``backups.json``) become one row per backup kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tdebench.api.engine import Instance, threat_probes
from tdebench.api.keys import FILE
from tdebench.verify import atrest
from tdebench.verify import threat_checks as tc
from tdebench.verify.threat_rows import (ATTACKERS, EXPOSED, NOT_CHECKED, ORDER, PROTECTED, Needles, Row,
                                         backup_phrase, backup_rows, join_words)

class ThreatModel:
    """The threat-model rows of every config of one run."""

    def __init__(self, known_plaintext: tuple[str, ...] = (), workload: str = "") -> None:
        self.known = tuple(known_plaintext)
        self.workload = workload
        self._needles: dict[str, Needles] = {}

    def new_markers(self, label: str) -> list[str]:
        """Fresh canary markers for one config (kept in memory for the final pass, never written)."""
        markers = atrest.new_markers()
        self._needles[label] = Needles(tuple(markers), self.known)
        return markers

    def assess(self, label: str, instance: Instance, at_rest: dict[str, Any]) -> dict[str, Any]:
        """Every row for one config, after the at-rest scan (``at_rest``: its verification.json entry)."""
        needles = self._needles.get(label) or Needles((), self.known)
        probes = threat_probes(instance)
        if not instance.scannable:
            rows = tc.unreachable(probes, needles)
        else:
            rows = tc.all_rows(probes, at_rest, needles, self._backup_note())
        return self._entry(instance, rows)

    def finish(self, label: str, instance: Instance, entry: dict[str, Any], run_dir: Path) -> None:
        """Final pass before clean-up: statement logs and temp locations again, backups from backups.json."""
        threats = entry.get("threats")
        needles = self._needles.get(label)
        if not isinstance(threats, dict) or needles is None:
            return
        rows = [Row(**r) for r in threats.get("rows", [])]
        if instance.scannable:
            rows = tc.final_rows(threat_probes(instance), rows, needles)
        rows = merge_backups(rows, load_backup_verdicts(run_dir, label), self._backup_note())
        entry["threats"] = self._entry(instance, rows, final=True)

    def _backup_note(self) -> str:
        if self.workload == "backup":
            return "no backup finished yet (backups are made in the trials of the backup workload)"
        return "no backup was made in this run: run --workload backup"

    @staticmethod
    def _entry(instance: Instance, rows: list[Row], final: bool = False) -> dict[str, Any]:
        name = str(instance.config.spec)  # a named config (e.g. a variant: galera-none-tls) says which it is
        name += f" ({instance.config.label})" if instance.config.name or instance.config.keys != FILE else ""
        out = {"rows": [r.to_json() for r in sorted(rows, key=_row_order)],
               "final_pass": final, "sentence": verdict_sentence(name, rows) if not instance.config.spec.is_plain
               else ""}
        return out


def _row_order(row: Row) -> tuple[int, str]:
    base = row.id.split(":", 1)[0]
    return (ORDER.index(base) if base in ORDER else len(ORDER), row.id)


# backups ------------------------------------------------------------------------------------------
def load_backup_verdicts(run_dir: Path, label: str) -> dict[str, Any]:
    """{"kinds": {...}, "backups": {...}} of one config from backups.json ({} when there is none)."""
    try:
        data = json.loads((run_dir / "backups.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    config = (data.get("configs") or {}).get(label) if isinstance(data, dict) else None
    if not isinstance(config, dict):
        return {}
    return {"kinds": data.get("kinds") or {}, "backups": config.get("backups") or {}}


def merge_backups(rows: list[Row], verdicts: dict[str, Any], note: str) -> list[Row]:
    kept = [r for r in rows if not (r.id == "backups" or r.id.startswith("backups:"))]
    return kept + backup_rows(verdicts, note)


# the verdict sentence ---------------------------------------------------------------------------------
def phrase(row: Row) -> str:
    """How a verdict sentence names the attacker of ``row``."""
    if row.id.startswith("backups:"):
        kind = row.id.split(":", 1)[1]
        return backup_phrase(kind, {"logical": row.evidence.get("logical")})
    return ATTACKERS.get(row.id, (row.attacker, row.attacker))[1]


def merge_kinds(phrases: list[str]) -> list[str]:
    """``physical backups (a)``, ``physical backups (b)`` -> ``physical backups (a, b)``."""
    merged: dict[str, list[str]] = {}
    for text in phrases:
        head, sep, rest = text.partition(" (")
        kinds = merged.setdefault(head if sep else text, [])
        if sep:
            kinds.append(rest.rstrip(")"))
    return [f"{head} ({', '.join(kinds)})" if kinds else head for head, kinds in merged.items()]


def verdict_sentence(name: str, rows: list[Row] | list[dict[str, Any]]) -> str:
    """"<spec> stops A, B and C; it does not stop X or Y (not checked: Z)." from the rows' statuses."""
    rows = sorted((r if isinstance(r, Row) else Row(**r) for r in rows), key=_row_order)
    stops = merge_kinds([phrase(r) for r in rows if r.status == PROTECTED])
    leaks = merge_kinds([phrase(r) for r in rows if r.status == EXPOSED])
    unknown = merge_kinds([phrase(r) for r in rows if r.status == NOT_CHECKED])
    parts = []
    if stops:
        parts.append(f"{name} stops {join_words(stops)}")
    if leaks:
        parts.append(("it does not stop " if stops else f"{name} does not stop ") + join_words(leaks, "or"))
    text = "; ".join(parts) if parts else f"{name}: no attacker was checked"
    return text + (f" (not checked: {join_words(unknown)})" if unknown else "") + "."
