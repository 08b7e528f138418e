"""What each mechanism stops and leaks, and where its keys live: the threat model of the runs
(``verification.json``, ``configs.<label>.threats``; docs/security.md), never typed in.

The rows come from the cost run (every config's threat model is built there, after its at-rest scan); the
backup rows (``backups:<kind>``) from the backups run when the decision made one. Where the keys live is the
evidence of the row "copy of the whole disk", which lists every key, where it is, its mode and what protects it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tdebench.decide.attackers import Attacker
from tdebench.decide.sources import SubRunFiles
from tdebench.verify.threat_checks import key_text
from tdebench.verify.threat_rows import NOT_APPLICABLE, PROTECTED, attackers_of

STOPS, LEAKS, UNKNOWN = "stops", "does not stop", "not known"


@dataclass
class Protection:
    """The threat-model rows of one spec, the run each came from, and its keys."""

    encryption: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    sentence: str = ""
    keys: list[str] = field(default_factory=list)
    keys_known: bool = False

    def rows_of(self, attacker: Attacker) -> list[dict[str, Any]]:
        return [r for r in self.rows if attacker.selects(str(r.get("id", "")))]

    def verdict(self, attacker: Attacker) -> tuple[str, str]:
        """(stops / does not stop / not known, why): stopped when every row of the attacker is protected or not
        applicable; not stopped when one is exposed; not known when a row is not checked or missing."""
        rows = self.rows_of(attacker)
        if not rows:
            return UNKNOWN, "the runs have no such row"
        exposed = [r for r in rows if r.get("status") == "exposed"]
        if exposed:
            return LEAKS, "; ".join(f"{r.get('attacker')}: {r.get('summary')}" for r in exposed)
        unknown = [r for r in rows if r.get("status") not in (PROTECTED, NOT_APPLICABLE)]
        if unknown:
            return UNKNOWN, "; ".join(f"{r.get('attacker')}: {r.get('summary')}" for r in unknown)
        return STOPS, "; ".join(f"{r.get('attacker')}: {r.get('summary')}" for r in rows)


def _keys(rows: list[dict[str, Any]]) -> tuple[list[str], bool]:
    disk = next((r for r in rows if r.get("id") == "disk"), None)
    keys = (disk or {}).get("evidence", {}).get("keys") if disk else None
    if not isinstance(keys, list):
        return [], False
    return [key_text(k) for k in keys if isinstance(k, dict)], True


def protection(encryption: str, cost: SubRunFiles, backups: SubRunFiles | None) -> Protection:
    """The rows of spec ``encryption``: the cost run's, with the backups run's backup rows where it made them."""
    threats = cost.threats_of(encryption)
    rows = [r for r in threats.get("rows") or [] if isinstance(r, dict)]
    if backups is not None and backups.present:
        theirs = [r for r in backups.threats_of(encryption).get("rows") or []
                  if isinstance(r, dict) and str(r.get("id", "")).startswith("backups")]
        if theirs:  # in place of the cost run's "not checked" backup row
            at = next((i for i, r in enumerate(rows) if str(r.get("id", "")).startswith("backups")), len(rows))
            rest = [r for r in rows if not str(r.get("id", "")).startswith("backups")]
            rows = rest[:at] + theirs + rest[at:]
    keys, known = _keys(rows)
    return Protection(encryption, rows, str(threats.get("sentence") or ""), keys, known)


def attacker_rows(items: list[Protection]) -> list[tuple[str, str]]:
    """(row id, attacker) over every spec, in the threat model's order."""
    return attackers_of(p.rows for p in items)
