"""The report's throughput-vs-virtual-users charts: TPM and NOPM for tpcc, tps per sysbench test."""

from __future__ import annotations

import csv
from pathlib import Path

from tdebench.report import build_report, summarize
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
    charts = throughput_vs_users(rs.analysis, rs.engines[0])
    assert [c.title for c in charts] == ["mariadb: TPM vs virtual users", "mariadb: NOPM vs virtual users"]
    html = build_report(tmp_path / "run").read_text()
    assert "NOPM vs virtual users" in html and "95% bootstrap CI" in html


def test_sysbench_tests_with_the_same_steps_each_get_a_tps_chart(tmp_path):
    tests = {"oltp_read_write": ["tps", "tpm"], "oltp_insert": ["tps", "tpm"]}
    _write(tmp_path / "run", _rows("sysbench", tests))
    rs = summarize(tmp_path / "run")
    titles = [c.title for c in throughput_vs_users(rs.analysis, rs.engines[0])]
    assert titles == ["mariadb: transactions/s vs virtual users (oltp_insert)",
                      "mariadb: transactions/s vs virtual users (oltp_read_write)"]
    assert "transactions/s vs virtual users" in build_report(tmp_path / "run").read_text()
