"""Switching each mechanism on, measured by doing it: the switching run's ``report/switching.csv`` row of the
switch on (time to done, the background's throughput and p95 latency meanwhile and after, against the phase just
before, the peak extra disk of an offline switch, the plaintext the scan found after it).

An offline switch stops the service: its downtime is switching.csv's ``downtime_s`` where the run records it,
else its time to done. A restart the switch needs (TDE's key plugin and redo log) is the row of action
``restart_on`` (its ``downtime_s``, else its time to done), else the median of the run's ``encrypt`` measurements
whose metric names a restart (``restart_seconds``). A switch that copies the data reports the plaintext left in the
old copy until it was deleted (``old_copy_hits``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median

from tdebench.decide.sources import SubRunFiles, measurement_rows
from tdebench.report.fmt import fmt_bytes

MIN_TRIALS = 3  # an interval over fewer trials is shown, but as not resolved
_RESTART = re.compile(r"restart", re.I)


@dataclass(frozen=True)
class Ratio:
    """A phase ÷ the phase just before, geometric mean over trials with its 95% interval."""

    mean: float
    low: float | None
    high: float | None
    trials: int

    @property
    def resolved(self) -> bool:
        """The interval excludes 1 and rests on at least :data:`MIN_TRIALS` trials."""
        return (self.trials >= MIN_TRIALS and self.low is not None and self.high is not None
                and (self.high < 1 or self.low > 1))


@dataclass
class Switching:
    """How switching one spec on went, or why it was not measured."""

    encryption: str
    measured: bool
    reason: str = ""  # not measured: why
    run: str = ""  # the switching run's directory name
    method: str = ""  # online or offline
    trials: int = 0
    seconds: float | None = None  # median time to done
    downtime_s: float | None = None  # offline: the service was down that long
    tpm_during: Ratio | None = None
    p95_during: Ratio | None = None
    tpm_after: Ratio | None = None
    extra_disk: float | None = None
    restart_s: float | None = None
    plaintext_left: int | None = None
    old_copy_left: int | None = None  # plaintext in the old copy of a switch that copies, before it was deleted
    data: str = ""  # what was switched

    @property
    def offline(self) -> bool:
        return self.method == "offline"


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _ratio(row: dict[str, str], prefix: str, trials: int) -> Ratio | None:
    mean = _float(row.get(f"{prefix}_ratio"))
    if mean is None:
        return None
    return Ratio(mean, _float(row.get(f"{prefix}_ci95_low")), _float(row.get(f"{prefix}_ci95_high")), trials)


def _restart(run: SubRunFiles) -> float | None:
    row = next((r for r in run.switching if r.get("action") == "restart_on"), None)
    if row is not None:
        return _float(row.get("downtime_s")) if _float(row.get("downtime_s")) is not None else _float(
            row.get("time_to_done_s"))
    values = [float(r["value"]) for r in measurement_rows(run.path, "encrypt")
              if _RESTART.search(r.get("metric", "")) and _float(r.get("value")) is not None and r.get("unit") == "s"]
    return median(values) if values else None


def _data(run: SubRunFiles) -> str:
    """What the switch encrypted: the background's data (and TPC-H beside or alone) and its size on disk."""
    data = run.manifest.get("data") or {}
    options = data.get("options") or {}
    parts = []
    if data.get("warehouses"):
        parts.append(f"TPC-C, {data['warehouses']} warehouse{'s' if data['warehouses'] != 1 else ''}")
    if options.get("sf"):
        parts.append(f"TPC-H SF {options['sf']:g}")
    size = run.data_bytes()
    return " and ".join(parts) + (f" ({fmt_bytes(size[0])} of {size[1]})" if size else "")


def switching(encryption: str, run: SubRunFiles | None, refusal: str, status: dict[str, str]) -> Switching:
    """The switch on of spec ``encryption``: from its switching run, or not measured with the reason."""
    if run is None:
        return Switching(encryption, False, refusal or "no switching run")
    row = next((r for r in run.switching if r.get("action") == "on"), None)
    if row is None:
        why = status.get("note") or run.report_problem or (
            "the switching run did not finish a switch" if run.present else "the switching run did not start")
        return Switching(encryption, False, why, run=run.name)
    trials = int(_float(row.get("trials")) or 0)
    method = row.get("method", "")
    seconds = _float(row.get("time_to_done_s"))
    down = _float(row.get("downtime_s"))
    return Switching(
        encryption, True, run=run.name, method=method, trials=trials, seconds=seconds,
        downtime_s=down if down is not None else (seconds if method == "offline" else None),
        tpm_during=_ratio(row, "tpm_during", trials), p95_during=_ratio(row, "p95_during", trials),
        tpm_after=_ratio(row, "tpm_after", trials), extra_disk=_float(row.get("peak_extra_bytes")),
        restart_s=_restart(run), plaintext_left=_int(row.get("plaintext_hits_in_scope")),
        old_copy_left=_int(row.get("old_copy_hits")), data=_data(run))


def _int(text: str | None) -> int | None:
    value = _float(text)
    return None if value is None else int(value)
