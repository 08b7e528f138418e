"""compare_runs: the same statistics between two runs (run A is the baseline)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tdebench.report import compare, compare_runs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"


def slowed_copy(dest: Path, factor: float, config: str) -> Path:
    """The fixture run with every ok value of one config multiplied by ``factor``."""
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("report", "*.py", "__pycache__"))
    with (FIXTURE / "measurements.csv").open() as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        fields = reader.fieldnames
    for r in rows:
        if r["config"] == config and r["value"] and r["metric"] == "elapsed":
            r["value"] = f"{float(r['value']) * factor:.6f}"
    with (dest / "measurements.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return dest


def test_compare_runs_detects_a_slowdown(tmp_path: Path) -> None:
    other = slowed_copy(tmp_path / "b", 1.25, "sqlite-sqlcipher-aes-256-cbc")
    index = compare_runs(FIXTURE, other, tmp_path / "cmp")
    assert index == tmp_path / "cmp" / "index.html"
    html = index.read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert "run B is 25.0% slower than run A" in html
    assert "sqlite-none: no measurable change" in html
    md = (tmp_path / "cmp" / "summary.md").read_text()
    assert "## Per query: sqlite-sqlcipher-aes-256-cbc" in md
    with (tmp_path / "cmp" / "comparison.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    total = next(r for r in rows if r["config"].endswith("cbc") and r["step"] == "total"
                 and r["test"] == "power")
    assert float(total["change_pct"]) == pytest.approx(25.0, abs=0.01)


def test_change_statistics_match_scipy(tmp_path: Path) -> None:
    other = slowed_copy(tmp_path / "b", 1.1, "sqlite-none")
    cmp = compare(FIXTURE, other)
    key = next(c.key for c in cmp.changes if c.config == "sqlite-none" and c.step == "q01")
    a = cmp.base.analysis.measurements.sample(key).values
    b = cmp.other.analysis.measurements.sample(key).values
    change = cmp.change(key)
    # runs are never paired: ratio of geometric means with Welch on the logs (n = 3 < 10)
    assert change.ci_method == "welch-log"
    assert change.change_pct == pytest.approx((stats.gmean(b) / stats.gmean(a) - 1) * 100, abs=1e-3)
    ref = stats.ttest_ind(np.log(b), np.log(a), equal_var=False)
    assert change.p_value == pytest.approx(ref.pvalue)
    ci = ref.confidence_interval(0.95)
    assert change.ci_low_pct == pytest.approx(np.expm1(ci.low) * 100)
    assert change.ci_high_pct == pytest.approx(np.expm1(ci.high) * 100)
    assert cmp.matched == ["sqlite-none", "sqlite-sqlcipher-aes-256-cbc"]
    assert cmp.only_base == [] and cmp.only_other == []
