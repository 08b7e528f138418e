"""The report built from the synthetic run directory in tests/fixtures/rundir_sqlite."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tdebench.errors import UsageError
from tdebench.report import build_report, summarize
from tdebench.report.figures import throughput_vs_users

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE = FIXTURES / "rundir_sqlite"
SNAPSHOT = FIXTURES / "rundir_sqlite_expected" / "summary.md"
STABLE_COLUMNS = ["engine", "config", "workload", "step", "n", "median_plain", "median_config",
                  "overhead_pct", "ci_low_pct", "ci_high_pct", "p_value"]
LATER_COLUMNS = ["test", "metric", "unit", "encryption", "plain_config", "n_plain", "n_config", "paired",
                 "ci_method", "p_method", "label_status", "plain_label_status", "pairing_unit",
                 "n_faulted", "n_faulted_plain", "verdict", "n_unit", "difference", "difference_low", "difference_high"]
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "area", "base", "source"}


def copy_fixture(dest: Path) -> Path:
    """A private copy of the fixture run directory (the report is written inside it)."""
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("report", "*.py", "__pycache__"))
    return dest


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = copy_fixture(tmp_path_factory.mktemp("report") / "rundir_sqlite")
    assert build_report(run_dir) == run_dir / "report" / "index.html"
    return run_dir


def write_measurements(run_dir: Path, records: list[dict[str, object]]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    cols = ["run_id", "block", "trial", "config", "engine", "encryption", "workload", "test",
            "stream", "step", "metric", "value", "unit", "started_at", "status"]
    with (run_dir / "measurements.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in records:
            w.writerow({"run_id": "x", "stream": "", "started_at": "", "status": "ok", **r})


def test_all_files_are_written(run: Path) -> None:
    names = {p.name for p in (run / "report").iterdir()}
    assert {"index.html", "summary.md", "overhead.csv", "summary.csv"} <= names


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids += [v for k, v in attrs if k == "id" and v]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids += [v for k, v in attrs if k == "id" and v]

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def test_html_is_self_contained_and_well_formed(run: Path) -> None:
    html = (run / "report" / "index.html").read_text()
    assert "http://" not in html and "https://" not in html
    for banned in ("<script", "<link", "<iframe", "@import", "@font-face", " src="):
        assert banned not in html.lower(), banned
    assert re.findall(r"url\((?!#)", html) == []
    assert html.count("<svg") >= 3
    checker = _Checker()
    checker.feed(html)
    assert checker.errors == [] and checker.stack == []
    assert len(checker.ids) == len(set(checker.ids)), "duplicate element ids across charts"


def test_html_shows_verdict_tables_and_methods(run: Path) -> None:
    html = (run / "report" / "index.html").read_text()
    assert re.search(r"sqlcipher:aes-256-cbc: <strong>\d+\.\d% slower</strong> than plain "
                     r"\(95% CI \d+\.\d% to \d+\.\d%, n = 3 trials\), p=0\.\d{3}\.", html)
    for text in ("Read with care", "Per query", "q22", "Power@Size", "Verification", "Methods",
                 "AMD EPYC 7B13", "SQLCipher 4.6.1", "0 (warm-up)", "warm", "1 timed out",
                 "t-interval on the log ratios", "benchmarks/stats_coverage.py --reps 2000",
                 "bootstrap interval (10,000 resamples", "paired t-test on the log ratios",
                 "encrypted on disk"):
        assert text in html, text


def _log_t(plain: dict[int, float], enc: dict[int, float]) -> tuple[str, float, float, float, float]:
    """Independent recomputation: paired t on log ratios when the blocks match, else Welch on logs."""
    if plain.keys() == enc.keys():
        blocks = sorted(plain)
        d = np.log([enc[b] for b in blocks]) - np.log([plain[b] for b in blocks])
        res, est = stats.ttest_1samp(d, 0.0), d.mean()
        method = "t-log-paired"
    else:
        lp, le = np.log(list(plain.values())), np.log(list(enc.values()))
        res, est = stats.ttest_ind(le, lp, equal_var=False), le.mean() - lp.mean()
        method = "welch-log"
    ci = res.confidence_interval(0.95)
    return method, *(float(np.expm1(x) * 100) for x in (est, ci.low, ci.high)), float(res.pvalue)


def test_overhead_csv_can_be_recomputed_from_measurements(run: Path) -> None:
    with (run / "report" / "overhead.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == STABLE_COLUMNS + LATER_COLUMNS  # new columns only at the end
        overhead = list(reader)
    values: dict[tuple[str, ...], dict[int, float]] = {}
    with (FIXTURE / "measurements.csv").open() as fh:
        for r in csv.DictReader(fh):
            if r["status"] == "ok" and r["block"] != "0":
                key = (r["config"], r["test"], r["step"], r["metric"])
                values.setdefault(key, {})[int(r["block"])] = float(r["value"])
    assert len(overhead) == 22 + 4 + 4  # queries, rf1/rf2/total/power_at_size, load steps
    methods = set()
    for row in overhead:
        plain = values[("sqlite-none", row["test"], row["step"], row["metric"])]
        enc = values[(row["config"], row["test"], row["step"], row["metric"])]
        assert float(row["median_plain"]) == pytest.approx(np.median(list(plain.values())), rel=1e-12)
        assert float(row["median_config"]) == pytest.approx(np.median(list(enc.values())), rel=1e-12)
        if len(plain) >= 2 and len(enc) >= 2:  # the fixture has 3 trials: t-intervals on logs
            method, est, low, high, p = _log_t(plain, enc)
            assert (row["ci_method"], row["p_method"]) == (method, method)
            assert float(row["overhead_pct"]) == pytest.approx(est, rel=1e-9)
            assert float(row["ci_low_pct"]) == pytest.approx(low, rel=1e-9)
            assert float(row["ci_high_pct"]) == pytest.approx(high, rel=1e-9)
            assert float(row["p_value"]) == pytest.approx(p, rel=1e-9)
            methods.add(method)
            if method == "t-log-paired":  # what the config adds, in seconds: a t interval on the differences
                d = np.array([enc[b] - plain[b] for b in sorted(plain)])
                ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
                assert float(row["difference"]) == pytest.approx(d.mean(), rel=1e-9)
                assert float(row["difference_low"]) == pytest.approx(ci.low, rel=1e-9)
                assert float(row["difference_high"]) == pytest.approx(ci.high, rel=1e-9)
            else:
                assert row["difference"] == row["difference_low"] == row["difference_high"] == ""
        else:
            assert float(row["overhead_pct"]) == pytest.approx(
                (np.median(list(enc.values())) / np.median(list(plain.values())) - 1) * 100, rel=1e-9)
            assert row["p_value"] == row["ci_low_pct"] == row["ci_method"] == row["p_method"] == ""
    assert methods == {"t-log-paired", "welch-log"}  # q20 lost a trial, so it is not paired


def test_summary_csv_has_stats_per_config_and_step(run: Path) -> None:
    with (run / "report" / "summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    total = next(r for r in rows if r["config"] == "sqlite-none" and r["test"] == "power"
                 and r["step"] == "total")
    with (FIXTURE / "measurements.csv").open() as fh:
        vals = [float(r["value"]) for r in csv.DictReader(fh) if r["config"] == "sqlite-none"
                and r["step"] == "total" and r["test"] == "power" and r["status"] == "ok"]
    assert int(total["n"]) == 3
    assert float(total["median"]) == pytest.approx(np.median(vals))
    assert float(total["cv_pct"]) == pytest.approx(np.std(vals, ddof=1) / np.mean(vals) * 100)
    q20 = next(r for r in rows if r["config"].endswith("cbc") and r["step"] == "q20")
    assert (q20["n"], q20["n_timeout"]) == ("2", "1")


def test_summary_md_matches_snapshot(run: Path) -> None:
    text = (run / "report" / "summary.md").read_text()
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(text)
    assert SNAPSHOT.is_file(), "no snapshot yet: run once with UPDATE_SNAPSHOTS=1"
    assert text == SNAPSHOT.read_text(), "summary.md changed; if intended, rerun with UPDATE_SNAPSHOTS=1"


def test_report_is_deterministic(run: Path, tmp_path: Path) -> None:
    again = copy_fixture(tmp_path / "again")
    build_report(again)
    for name in ("index.html", "summary.md", "overhead.csv", "summary.csv"):
        assert (again / "report" / name).read_bytes() == (run / "report" / name).read_bytes(), name


def test_summarize_exposes_the_structures() -> None:
    rs = summarize(FIXTURE)
    (es,) = rs.engines
    assert es.engine == "sqlite" and es.plain == "sqlite-none"
    assert es.headline.step == "total" and es.headline.test == "power"
    enc = es.rows[1]
    assert enc.overhead is not None and enc.overhead.overhead_pct > 0
    assert enc.verification.encrypted_on_disk is True and enc.verification.good is True
    assert enc.figures["Power@Size"] is not None and enc.storage_pct == pytest.approx(
        12_996_608 / 12_587_008 * 100 - 100)
    assert [q.step for q in es.queries] == [f"q{i:02d}" for i in range(1, 23)]
    assert any(w.kind == "failures" for w in rs.warnings)


def test_missing_manifest_and_verification_are_tolerated(tmp_path: Path) -> None:
    run_dir = tmp_path / "bare"
    run_dir.mkdir()
    shutil.copy(FIXTURE / "measurements.csv", run_dir)
    build_report(run_dir)
    html = (run_dir / "report" / "index.html").read_text()
    assert "not checked" in html and "manifest.json is missing" in html
    with pytest.raises(UsageError):
        build_report(tmp_path / "nothing-here")


def test_plaintext_on_disk_is_flagged(tmp_path: Path) -> None:
    run_dir = copy_fixture(tmp_path / "leak")
    ver = json.loads((run_dir / "verification.json").read_text())
    ver["configs"]["sqlite-sqlcipher-aes-256-cbc"].update(encrypted_on_disk=False, marker_hits=3)
    (run_dir / "verification.json").write_text(json.dumps(ver))
    html = build_report(run_dir).read_text()
    assert "NO: plaintext found on disk" in html and "verification failed" in html


def test_three_configs_get_anova_and_tukey(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    recs = []
    for config, enc, factor in (("pg-none", "none", 1.0), ("pg-aes128", "tde:aes-128-ctr", 1.05),
                                ("pg-aes256", "tde:aes-256-ctr", 1.08)):
        for block in range(1, 6):
            recs.append({"block": block, "trial": block, "config": config, "engine": "postgres",
                         "encryption": enc, "workload": "tpch", "test": "power", "step": "total",
                         "metric": "elapsed", "value": 10 * factor * np.exp(rng.normal(0, 0.01)),
                         "unit": "s"})
    write_measurements(tmp_path / "three", recs)
    html = build_report(tmp_path / "three").read_text()
    assert "Across configs" in html and "Tukey" in html and "eta²" in html
    assert (tmp_path / "three" / "report" / "anova.csv").is_file()
    assert html.count("slower</strong> than plain") == 2
    assert "the 2 encrypted configs only" not in html, "two encrypted configs: no test of their own"


def test_key_lengths_get_their_own_anova_in_the_report(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    recs = []
    for config, enc, factor in (("m-none", "none", 1.0), ("m-128", "tde:aes-128-cbc", 1.05),
                                ("m-192", "tde:aes-192-cbc", 1.05), ("m-256", "tde:aes-256-cbc", 1.06)):
        for block in range(1, 5):
            recs.append({"block": block, "trial": block, "config": config, "engine": "mariadb",
                         "encryption": enc, "workload": "tpch", "test": "power", "step": "total",
                         "metric": "elapsed", "value": 10 * factor * np.exp(rng.normal(0, 0.01)), "unit": "s"})
    write_measurements(tmp_path / "keys", recs)
    html = build_report(tmp_path / "keys").read_text()
    md = (tmp_path / "keys" / "report" / "summary.md").read_text()
    assert "over the 3 encrypted configs only (plain left out)" in html
    assert "(the 3 encrypted configs only, plain left out): ANOVA" in md
    scopes = (tmp_path / "keys" / "report" / "anova.csv").read_text().splitlines()[0].split(",")
    assert scopes[-1] == "scope"
    with (tmp_path / "keys" / "report" / "anova.csv").open() as f:
        for row in csv.DictReader(f):  # plain numbers: no numpy repr ("np.float64(...)") in a CSV
            for col in ("f_stat", "p_anova", "eta_squared", "h_stat", "p_kruskal"):
                assert row[col] == "" or float(row[col]) >= 0, (col, row[col])


def test_the_throughput_test_gets_its_anova_beside_the_power_test(tmp_path: Path) -> None:
    """TPC-H power + throughput over four configs: both tests' totals are compared across configs (two streams per
    trial are one observation: n is the number of trials)."""
    rng = np.random.default_rng(7)
    recs = []
    for config, enc in (("m-none", "none"), ("m-128", "tde:aes-128-cbc"), ("m-192", "tde:aes-192-cbc"),
                        ("m-256", "tde:aes-256-cbc")):
        for block in range(1, 4):
            base = {"block": block, "trial": block, "config": config, "engine": "mariadb", "encryption": enc,
                    "workload": "tpch", "step": "total", "metric": "elapsed", "unit": "s"}
            recs.append({**base, "test": "power", "value": 80 * np.exp(rng.normal(0, 0.02))})
            for stream in (1, 2):
                recs.append({**base, "test": "throughput", "stream": stream,
                             "value": 85 * np.exp(rng.normal(0, 0.02))})
    write_measurements(tmp_path / "pt", recs)
    html = build_report(tmp_path / "pt").read_text()
    md = (tmp_path / "pt" / "report" / "summary.md").read_text()
    for text in (html, md):
        assert "power/total" in text and "throughput/total" in text
    assert "throughput/total (the 3 encrypted configs only, plain left out): ANOVA" in md
    with (tmp_path / "pt" / "report" / "anova.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if r["test"] == "throughput"]
    assert rows and all(r["n"] == "3;3;3;3" or r["n"] == "3;3;3" for r in rows), [r["n"] for r in rows]


def test_tpm_hook_draws_only_with_data(tmp_path: Path) -> None:
    recs = []
    for config, enc, factor in (("my-none", "none", 1.0), ("my-tde", "tde:aes-256-cbc", 0.93)):
        for vu in (5, 10, 20):
            for block in (1, 2, 3):
                recs.append({"block": block, "trial": block, "config": config, "engine": "mariadb",
                             "encryption": enc, "workload": "tpcc", "test": "oltp",
                             "step": f"vu{vu}", "metric": "tpm", "value": 1000 * vu * factor + block,
                             "unit": "tpm"})
    write_measurements(tmp_path / "tpcc", recs)
    rs = summarize(tmp_path / "tpcc")
    assert throughput_vs_users(rs.analysis, rs.engines[0], rs.presentation.rates)
    assert rs.engines[0].headline.step == "vu20"
    html = build_report(tmp_path / "tpcc").read_text()
    assert "TPM vs virtual users" in html and re.search(r"<strong>TPM \d+\.\d% lower</strong> than plain", html)
    fixture_rs = summarize(FIXTURE)
    assert not throughput_vs_users(fixture_rs.analysis, fixture_rs.engines[0], fixture_rs.presentation.rates)
