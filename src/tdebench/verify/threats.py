"""The threat model per config: which attacker each encryption setup stops, with the scans that show it.

One row per attacker, each the result of a check run on the live instance (:mod:`tdebench.verify.threat_checks`
with the engine's hooks on :class:`tdebench.api.engine.Instance`); what each row means and how it is checked
is in docs/security.md. A row's status is one of :data:`STATUSES`; its evidence names files, sizes and hits per
marker *name* (``canary-1``, ``known:<TPC-H text>``), never a canary value, key or password.

The runner calls :meth:`ThreatModel.assess` right after the at-rest scan (before any trial) and
:meth:`ThreatModel.finish` after the last trial, before the instances are destroyed: the statement logs and
temporary directories are scanned again (the workload's own statements and spills are in them by then) and the
backup workload's verdicts (``backups.json``) become one row per backup kind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.encryption import redact
from tdebench.api.engine import Instance
from tdebench.verify import atrest

PROTECTED, EXPOSED, NOT_APPLICABLE, NOT_CHECKED = "protected", "exposed", "not applicable", "not checked"
STATUSES = (PROTECTED, EXPOSED, NOT_APPLICABLE, NOT_CHECKED)

# row id -> (the attacker, as the table names it; the phrase a verdict sentence uses)
ATTACKERS: dict[str, tuple[str, str]] = {
    "data_dir": ("copy of the data directory", "a stolen data directory"),
    "redo_log": ("its redo log / WAL", "the redo log / WAL"),
    "disk": ("copy of the whole disk (key files and configuration included)", "a copy of the whole disk"),
    "backups": ("backups", "backups"),
    "statement_log": ("server logs with statement logging", "the statement log"),
    "temp_files": ("temporary and spill files during the run", "temporary and spill files"),
    "swap_core": ("swap and core dumps", "swap and core dumps"),
    "select_user": ("a database user with SELECT", "a database user with SELECT"),
    "network": ("an observer of the network", "a network observer"),
}
ORDER = ("data_dir", "redo_log", "disk", "backups", "statement_log", "temp_files", "swap_core", "select_user",
         "network")


@dataclass(frozen=True)
class Needles:
    """What the scans look for: canary values (shown by name only) and the data's known plaintext."""

    canaries: tuple[str, ...]
    known: tuple[str, ...] = ()

    @property
    def named(self) -> list[tuple[str, str]]:
        """(name, value) of every needle: ``canary-N`` for the canaries, ``known:<text>`` for known plaintext."""
        names = atrest.canary_names(list(self.canaries))
        return [(names[c], c) for c in self.canaries] + [(f"known:{k}", k) for k in self.known
                                                        if k not in self.canaries]

    def values(self) -> list[str]:
        return [v for _, v in self.named]

    def name_counts(self, counts: dict[str, int]) -> dict[str, int]:
        """{value: n} -> {name: n} for the needles found (n > 0)."""
        names = dict((v, n) for n, v in self.named)
        return {names[v]: c for v, c in counts.items() if c and v in names}

    def count_in(self, data: bytes) -> dict[str, int]:
        """Hits per needle name in ``data``."""
        return {name: data.count(value.encode()) for name, value in self.named if value.encode() in data}

    def scrub(self, text: str) -> str:
        """``text`` with every canary value replaced by its name and every issued secret by ``***``."""
        for name, value in self.named:
            if name.startswith("canary-"):
                text = text.replace(value, name)
        return redact(text)


@dataclass
class Row:
    """One attacker's verdict for one config."""

    id: str
    status: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    attacker: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown threat status {self.status!r}")
        if not self.attacker:
            base = self.id.split(":", 1)[0]
            self.attacker = ATTACKERS.get(base, (self.id, self.id))[0]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "attacker": self.attacker, "status": self.status, "summary": self.summary,
                "evidence": self.evidence}


def guarded(row_id: str, check: Callable[[], Row], scrub: Callable[[str], str], timing: str = "check_seconds") -> Row:
    """Run one check; an error in it makes its row "not checked" with the (scrubbed) reason. Its duration is
    recorded in the evidence under ``timing``."""
    started = time.perf_counter()
    try:
        row = check()
    except Exception as exc:  # noqa: BLE001 - one failing probe must not hide the other rows
        row = Row(row_id, NOT_CHECKED, f"the check failed: {scrub(f'{type(exc).__name__}: {exc}')[:300]}")
    row.evidence[timing] = round(time.perf_counter() - started, 3)
    return row


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
        from tdebench.verify import threat_checks as tc

        needles = self._needles.get(label) or Needles((), self.known)
        if not instance.scannable:
            rows = tc.unreachable(instance, needles)
        else:
            rows = tc.all_rows(instance, at_rest, needles, self._backup_note())
        return self._entry(instance, rows)

    def finish(self, label: str, instance: Instance, entry: dict[str, Any], run_dir: Path) -> None:
        """Final pass before clean-up: statement logs and temp locations again, backups from backups.json."""
        from tdebench.verify import threat_checks as tc

        threats = entry.get("threats")
        needles = self._needles.get(label)
        if not isinstance(threats, dict) or needles is None:
            return
        rows = [Row(**r) for r in threats.get("rows", [])]
        if instance.scannable:
            rows = tc.final_rows(instance, rows, needles)
        rows = merge_backups(rows, load_backup_verdicts(run_dir, label), self._backup_note())
        entry["threats"] = self._entry(instance, rows, final=True)

    def _backup_note(self) -> str:
        if self.workload == "backup":
            return "no backup finished yet (backups are made in the trials of the backup workload)"
        return "no backup was made in this run: run --workload backup"

    @staticmethod
    def _entry(instance: Instance, rows: list[Row], final: bool = False) -> dict[str, Any]:
        name = str(instance.config.spec)
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


def backup_phrase(kind: str, info: dict[str, Any]) -> str:
    """``physical backups (mariadb-backup)`` / ``logical dumps (mariadb-dump)``."""
    return f"{'logical dumps' if info.get('logical') else 'physical backups'} ({kind})"


def fmt_bytes(n: float) -> str:
    """``841 bytes``, ``1.6 KiB``, ``561.9 MiB``."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{int(n)} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def backup_rows(verdicts: dict[str, Any], note: str) -> list[Row]:
    """One row per backup kind the backup workload made and scanned; one "not checked" row otherwise."""
    backups = verdicts.get("backups") or {}
    if not backups:
        return [Row("backups", NOT_CHECKED, note)]
    rows = []
    for kind, v in sorted(backups.items()):
        info = (verdicts.get("kinds") or {}).get(kind, {})
        status = PROTECTED if v.get("encrypted") else EXPOSED
        evidence = {k: v.get(k) for k in ("files_scanned", "bytes_scanned", "marker_hits", "known_plaintext_hits",
                                          "files_with_hits", "block", "at")}
        evidence.update(tool=info.get("tool"), logical=info.get("logical"), compressed=info.get("compressed"))
        size = fmt_bytes(int(v.get("bytes_scanned") or 0))
        summary = (f"{v.get('files_scanned', 0)} file(s) of the backup scanned ({size}, decompressed): "
                   f"{v.get('marker_hits', 0)} canary and {v.get('known_plaintext_hits', 0)} known-plaintext hits")
        rows.append(Row(f"backups:{kind}", status, summary, evidence,
                        attacker=f"backup: {kind} ({'logical' if info.get('logical') else 'physical'}"
                                 f"{', compressed' if info.get('compressed') else ''})"))
    return rows


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


def join_words(items: list[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (duplicates dropped)."""
    items = list(dict.fromkeys(items))
    if len(items) < 3:
        return f" {last} ".join(items)
    return ", ".join(items[:-1]) + f", {last} " + items[-1]


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
