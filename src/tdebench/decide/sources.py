"""The files of one sub-run a decision reads: its manifest, verification.json, and the CSV tables of its report
(``report/overhead.csv``, ``report/switching.csv``), the very numbers its own report shows. A sub-run without
them (cut short before its report) gets its report built from its directory first."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tdebench.stats.overhead import Overhead

_INTS = {f.name for f in fields(Overhead) if f.type in ("int", int)}
_FLOATS = {f.name for f in fields(Overhead) if "float" in str(f.type)}


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _csv(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError:
        return []


def overhead_from_row(row: dict[str, str]) -> Overhead:
    """One overhead.csv row as the :class:`Overhead` it was written from."""
    values: dict[str, Any] = {}
    for f in fields(Overhead):
        text = row.get(f.name, "")
        if f.name in _INTS:
            values[f.name] = int(float(text)) if text else 0
        elif f.name in _FLOATS:
            values[f.name] = float(text) if text else None
        elif f.name == "paired":
            values[f.name] = text.lower() == "true"
        else:
            values[f.name] = text
    return Overhead(**values)


@dataclass
class SubRunFiles:
    """What one sub-run left: ``present`` is False when its directory holds no run."""

    name: str
    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    verification: dict[str, Any] = field(default_factory=dict)
    overheads: list[Overhead] = field(default_factory=list)
    switching: list[dict[str, str]] = field(default_factory=list)
    report_problem: str = ""
    warnings: list[Any] | None = None  # its report's warnings (Caveat), when its report was built here

    @property
    def present(self) -> bool:
        return bool(self.manifest)

    def config_of(self, encryption: str) -> str:
        """The config label of spec ``encryption`` in this run ("" when it has none)."""
        for c in self.manifest.get("configs") or []:
            if isinstance(c, dict) and c.get("encryption") == encryption and "base_label" not in c:
                return str(c.get("label", ""))
        return ""

    def threats_of(self, encryption: str) -> dict[str, Any]:
        """``configs.<label>.threats`` of verification.json for spec ``encryption`` ({} when absent)."""
        entry = (self.verification.get("configs") or {}).get(self.config_of(encryption)) or {}
        threats = entry.get("threats") if isinstance(entry, dict) else None
        return threats if isinstance(threats, dict) else {}

    def data_bytes(self, encryption: str | None = None) -> tuple[float, str] | None:
        """(bytes, what they are) of a config's data (spec ``encryption``; None: the first config): its tables and
        indexes as the engine's catalog reports them, else every file of its instance."""
        for c in self.manifest.get("configs") or []:
            if not isinstance(c, dict) or "base_label" in c or encryption not in (None, c.get("encryption")):
                continue
            totals = (c.get("storage") or {}).get("totals") if isinstance(c.get("storage"), dict) else None
            if isinstance(totals, dict) and isinstance(totals.get("total_bytes"), (int, float)):
                return float(totals["total_bytes"]), "tables and indexes"
            if isinstance(c.get("storage_bytes"), (int, float)):
                return float(c["storage_bytes"]), "on disk, every file of the instance"
        return None

    def verification_of(self, encryption: str) -> dict[str, Any]:
        entry = (self.verification.get("configs") or {}).get(self.config_of(encryption))
        return entry if isinstance(entry, dict) else {}


def load(path: Path, name: str) -> SubRunFiles:
    """Read sub-run ``name`` at ``path``; builds its report first when its CSV tables are missing."""
    files = SubRunFiles(name, path)
    files.manifest = _json(path / "manifest.json")
    if not files.present or not (path / "measurements.csv").is_file():
        return files
    report = path / "report"
    if not (report / "overhead.csv").is_file():
        try:
            from tdebench.report import summarize, write_report

            summary = summarize(path)
            write_report(summary, report)
            files.warnings = summary.warnings
        except Exception as exc:  # noqa: BLE001 - the page says the run's figures are missing, and why
            files.report_problem = f"{type(exc).__name__}: {exc}"
    files.verification = _json(path / "verification.json")
    files.overheads = [overhead_from_row(r) for r in _csv(report / "overhead.csv")]
    files.switching = _csv(report / "switching.csv")
    return files


def measurement_rows(path: Path, test: str) -> list[dict[str, str]]:
    """measurements.csv rows of ``test`` whose status is ok (or empty)."""
    return [r for r in _csv(path / "measurements.csv") if r.get("test") == test and r.get("status") in ("", "ok")]
