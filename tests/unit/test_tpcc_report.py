"""The report's throughput-vs-virtual-users charts (TPM and NOPM for tpcc, tps per sysbench test) and its
TPC-C consistency table."""

from __future__ import annotations

import csv
from pathlib import Path

from tdebench.report import build_report, summarize
from tdebench.report.consistency_view import consistency_tables
from tdebench.report.figures import throughput_vs_users

COLS = ["run_id", "block", "trial", "config", "engine", "encryption", "workload", "test", "stream", "step",
        "metric", "value", "unit", "started_at", "status"]


def _write(run_dir: Path, rows: list[dict[str, object]]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "measurements.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLS)
        w.writeheader()
        for r in rows:
            w.writerow({"run_id": "x", "stream": "", "started_at": "", "status": "ok", **r})


def _rows(workload: str, tests: dict[str, list[str]]) -> list[dict[str, object]]:
    rows = []
    for block in (1, 2, 3):
        for config, enc, factor in (("mariadb-none", "none", 1.0), ("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 0.9)):
            for test, metrics in tests.items():
                for vu in (1, 2, 4):
                    for metric in metrics:
                        rows.append({"block": block, "trial": block, "config": config, "engine": "mariadb",
                                     "encryption": enc, "workload": workload, "test": test, "step": f"vu{vu}",
                                     "metric": metric, "value": 100 * vu * factor + block, "unit": metric})
                    rows.append({"block": block, "trial": block, "config": config, "engine": "mariadb",
                                 "encryption": enc, "workload": workload, "test": test, "step": f"vu{vu}.new_order",
                                 "metric": "latency_p95", "value": 0.01 * vu, "unit": "s"})
    return rows


def test_tpcc_shows_tpm_and_nopm_against_users(tmp_path):
    _write(tmp_path / "run", _rows("tpcc", {"tpcc": ["tpm", "nopm"]}))
    rs = summarize(tmp_path / "run")
    charts = throughput_vs_users(rs.analysis, rs.engines[0], rs.presentation.rates)
    assert [c.title for c in charts] == ["mariadb: TPM vs virtual users", "mariadb: NOPM vs virtual users"]
    html = build_report(tmp_path / "run").read_text()
    assert "NOPM vs virtual users" in html and "95% bootstrap CI" in html


def test_sysbench_tests_with_the_same_steps_each_get_a_tps_chart(tmp_path):
    tests = {"oltp_read_write": ["tps", "tpm"], "oltp_insert": ["tps", "tpm"]}
    _write(tmp_path / "run", _rows("sysbench", tests))
    rs = summarize(tmp_path / "run")
    titles = [c.title for c in throughput_vs_users(rs.analysis, rs.engines[0], rs.presentation.rates)]
    assert titles == ["mariadb: transactions/s vs virtual users (oltp_insert)",
                      "mariadb: transactions/s vs virtual users (oltp_read_write)"]
    assert "transactions/s vs virtual users" in build_report(tmp_path / "run").read_text()


def _consistency_rows(bad: tuple[str, int, int, float] | None) -> list[dict[str, object]]:
    """Violation counts of conditions 1-10 and 12 per trial (all 0 except ``bad`` = (config, block, N, count))."""
    rows = []
    for block in (1, 2, 3):
        for config, enc in (("mariadb-none", "none"), ("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr")):
            base = {"block": block, "trial": block, "config": config, "engine": "mariadb", "encryption": enc,
                    "workload": "tpcc", "test": "tpcc", "step": "consistency"}
            for n in (*range(1, 11), 12):
                count = bad[3] if bad and (config, block, n) == bad[:3] else 0
                rows.append({**base, "metric": f"condition_{n}_violations", "value": count, "unit": "count"})
            rows.append({**base, "metric": "elapsed", "value": 0.5 + block / 10, "unit": "s"})
    return rows


def test_the_consistency_table_shows_every_condition_and_the_trials_that_violated_one(tmp_path):
    _write(tmp_path / "run", _rows("tpcc", {"tpcc": ["tpm", "nopm"]})
           + _consistency_rows(("mariadb-tde-aes-256-ctr", 2, 10, 7)))
    tables = consistency_tables(summarize(tmp_path / "run"))
    assert len(tables) == 1 and tables[0].conditions == [*range(1, 11), 12]
    assert tables[0].configs == ["mariadb-none", "mariadb-tde-aes-256-ctr"]
    html = build_report(tmp_path / "run").read_text()
    section = html[html.index('id="consistency"'):]
    section = section[:section.index("</section>")]
    assert section.count("held in 3 of 3 trials") == 11 + 10
    assert "violated in 1 of 3 trials (at most 7 rows)" in section
    assert "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)" in section
    assert "600 ms – 800 ms" in section  # the time the check took, lowest to highest
    md = (tmp_path / "run" / "report" / "summary.md").read_text()
    assert "## TPC-C consistency" in md and "| 10 | C_BALANCE = sum(delivered OL_AMOUNT)" in md


def test_no_consistency_section_without_tpcc(tmp_path):
    _write(tmp_path / "run", _rows("sysbench", {"oltp_read_write": ["tps"]}))
    assert consistency_tables(summarize(tmp_path / "run")) == []
    assert 'id="consistency"' not in build_report(tmp_path / "run").read_text()


def test_a_dialect_with_one_writer_at_a_time_is_named_in_the_caption(tmp_path):
    """The caption comes from the dialect the manifest recorded (concurrent_writes), not from the engine's name."""
    import json
    from dataclasses import asdict, replace

    from tdebench.api.dialect import MARIADB
    from tdebench.report.figures import one_writer

    run = tmp_path / "run"
    _write(run, _rows("tpcc", {"tpcc": ["tpm", "nopm"]}))
    single = replace(MARIADB, product="OneWriterDB", concurrent_writes=False)
    configs = [{"label": "mariadb-none", "dialect": asdict(single)}, {"label": "mariadb-tde-aes-256-ctr"}]
    (run / "manifest.json").write_text(json.dumps({"configs": configs}))
    rs = summarize(run)
    assert one_writer(rs, rs.engines[0]) == "OneWriterDB"
    captions = [c.caption for c in throughput_vs_users(rs.analysis, rs.engines[0], rs.presentation.rates,
                                                            one_writer(rs, rs.engines[0]))]
    assert all("OneWriterDB allows one writer at a time" in c for c in captions)
    (run / "manifest.json").write_text(json.dumps({"configs": [{"label": "mariadb-none",
                                                                "dialect": asdict(MARIADB)}]}))
    rs = summarize(run)
    assert one_writer(rs, rs.engines[0]) == ""
