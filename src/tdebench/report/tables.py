"""CSV tables of a report: overhead.csv, summary.csv, anova.csv (atomic writes)."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tdebench.report.fmt import fmt_csv
from tdebench.stats.analysis import Analysis
from tdebench.stats.describe import SUMMARY_FIELDS
from tdebench.stats.load import SeriesKey
from tdebench.stats.overhead import OVERHEAD_FIELDS
from tdebench.stats.wording import n_unit_of, verdict_word

ANOVA_FIELDS = ("engine", "workload", "test", "step", "metric", "configs", "n", "f_stat",
                "p_anova", "eta_squared", "h_stat", "p_kruskal", "skewed", "primary_test",
                "tukey_pairs", "scope")


def write_text(path: Path, text: str) -> Path:
    """Write a file atomically (temp file in the same directory, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def to_csv(fields: Sequence[str], rows: Iterable[Mapping[str, object]]) -> str:
    """CSV text with a header row; None is empty, floats keep full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fields)
    for row in rows:
        w.writerow([fmt_csv(row.get(f)) for f in fields])
    return buf.getvalue()


def anova_rows(a: Analysis) -> list[dict[str, object]]:
    """One row per multi-config test; Tukey pairs folded into one cell."""
    return [{
        "engine": r.engine, "workload": r.workload, "test": r.test, "step": r.step,
        "metric": r.metric, "configs": ";".join(r.configs), "n": ";".join(map(str, r.n)),
        "f_stat": r.f_stat, "p_anova": r.p_anova, "eta_squared": r.eta_squared, "h_stat": r.h_stat,
        "p_kruskal": r.p_kruskal, "skewed": r.skewed, "primary_test": r.primary_test,
        "tukey_pairs": ";".join(f"{t.config_a}|{t.config_b}|{t.mean_diff!r}|{t.p_value!r}"
                                for t in r.tukey),
        "scope": r.scope,
    } for r in a.anovas]


LABEL_FIELDS = ("label_status", "plain_label_status")  # confirmed / overridden / unverifiable (results.labels)
#: columns added after the label columns (columns are only ever appended)
LATER_FIELDS = ("pairing_unit",)
#: trials flagged by --fault (docs/faults.md): not in n and not in the interval, counted here
FAULT_FIELDS = ("n_faulted", "n_faulted_plain")
#: the verdict's word (stats.wording.verdict_word), as every other view says it, and what n counts
VERDICT_FIELDS = ("verdict", "n_unit")
#: what the config adds in the metric's unit, paired (stats.overhead.paired_difference)
DIFFERENCE_FIELDS = ("difference", "difference_low", "difference_high")
OVERHEAD_COLUMNS = (*(f for f in OVERHEAD_FIELDS if f not in LATER_FIELDS + DIFFERENCE_FIELDS), *LABEL_FIELDS,
                    *LATER_FIELDS, *FAULT_FIELDS, *VERDICT_FIELDS, *DIFFERENCE_FIELDS)


def write_tables(a: Analysis, out_dir: Path, labels: Mapping[str, str] | None = None) -> list[Path]:
    """overhead.csv, summary.csv and (when there are ≥ 3 configs) anova.csv.

    ``labels``: config -> label status; overhead.csv gets it for the config and its plain twin, summary.csv for
    the config (empty where unknown).
    """
    labels = labels or {}
    faulted = a.measurements.faulted

    def flagged(o: object, config: str) -> int:
        return faulted.get(SeriesKey(o.engine, config, o.workload, o.test, o.step, o.metric), 0)  # type: ignore[attr-defined]

    overheads = ({**o.as_row(), "label_status": labels.get(o.config, ""),
                  "plain_label_status": labels.get(o.plain_config, ""), "n_faulted": flagged(o, o.config),
                  "n_faulted_plain": flagged(o, o.plain_config), "verdict": verdict_word(o), "n_unit": n_unit_of(o, a.summaries)} for o in a.overheads)
    summaries = ({**s.as_row(), "label_status": labels.get(s.key.config, ""), "n_faulted": faulted.get(s.key, 0),
                  "n_unit": s.n_unit} for s in a.summaries.values())
    paths = [
        write_text(out_dir / "overhead.csv", to_csv(OVERHEAD_COLUMNS, overheads)),
        write_text(out_dir / "summary.csv", to_csv((*SUMMARY_FIELDS, "label_status", "n_faulted", "n_unit"), summaries)),
    ]
    if a.anovas:
        paths.append(write_text(out_dir / "anova.csv", to_csv(ANOVA_FIELDS, anova_rows(a))))
    return paths
