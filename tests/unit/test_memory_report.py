"""The report of a memory sweep and of engine counters (synthetic runs): the cost curve with its reading, the
cipher floor from counted bytes (and its labelled fallback), hit ratio and bytes decrypted beside the overheads."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tdebench.measure.cipherspeed import CipherSpeed, floor_for_spec, save_table
from tdebench.report import build_report, summarize
from tdebench.report.curve import curves
from tdebench.report.extras import compute
from tdebench.report.floor import COUNTED, FALLBACK

COLS = ["run_id", "block", "trial", "config", "engine", "encryption", "workload", "test", "stream", "step", "metric",
        "value", "unit", "started_at", "status"]
GB = 1e9
SPEEDS = [CipherSpeed("AES-256-CTR", "encrypt", 4 * GB, 16384), CipherSpeed("AES-256-CTR", "decrypt", 4 * GB, 16384)]
PAGE = 16384
# ratio -> (slowdown of the encrypted twin, pages missed per query): a small cache misses a lot and costs more
REGIMES = {0.1: (1.20, 5000), 2.0: (1.00, 0)}
QUERIES = ("q01", "q06", "q14")


def _write(run: Path, counters: bool = True) -> None:
    run.mkdir(parents=True)
    rng = np.random.default_rng(11)
    rows = []
    for i, (ratio, (slowdown, misses)) in enumerate(REGIMES.items()):
        for trial in range(4):
            block = i * 4 + trial
            for base, enc, factor in (("m-none", "none", 1.0), ("m-tde", "tde:aes-256-ctr", slowdown)):
                config = f"{base}@mem{ratio:g}"

                def add(test: str, step: str, metric: str, value: float, unit: str) -> None:
                    rows.append({"run_id": "mem", "block": block, "trial": block, "config": config,
                                 "engine": "mariadb", "encryption": enc, "workload": "tpch", "test": test,
                                 "stream": "0", "step": step, "metric": metric, "value": value, "unit": unit,
                                 "started_at": "", "status": "warmup" if trial == 0 else "ok"})
                total = 0.0
                for q in QUERIES:
                    t = (2.0 if ratio < 1 else 1.0) * factor * float(np.exp(rng.normal(0, 0.005)))
                    total += t
                    add("power", q, "elapsed", t, "s")
                    add("resources", q, "server_read_bytes", misses * PAGE, "bytes")
                    add("resources", q, "server_write_bytes", 0, "bytes")
                    if counters:
                        add("counters", q, "cache_requests", 10000, "pages")
                        add("counters", q, "cache_misses", misses, "pages")
                        add("counters", q, "page_size", PAGE, "bytes")
                        add("counters", q, "bytes_decrypted", misses * PAGE if enc != "none" else 0, "bytes")
                        add("counters", q, "bytes_encrypted", 0, "bytes")
                add("power", "total", "elapsed", total, "s")
    with (run / "measurements.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLS)
        writer.writeheader()
        writer.writerows(rows)
    configs = [{"label": b, "engine": "mariadb", "encryption": e, "storage_bytes": 10**8}
               for b, e in (("m-none", "none"), ("m-tde", "tde:aes-256-ctr"))]
    regimes = {f"{c['label']}@mem{r:g}": {"config": c["label"], "memory_ratio": r, "cache_bytes": int(r * 10**8)}
               for c in configs for r in REGIMES}
    configs += [{**c, "label": f"{c['label']}@mem{r:g}", "base_label": c["label"], "memory_ratio": r}
                for r in REGIMES for c in list(configs)]
    manifest = {"run_id": "mem", "plan": {"workload": "tpch", "memory_ratios": list(REGIMES)},
                "host": {"cpu_model": "Test CPU"}, "configs": configs,
                "memory": {"ratios": list(REGIMES), "data_bytes": {"mariadb": 10**8}, "regimes": regimes}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    save_table(run / "ciphers.json", SPEEDS)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("mem") / "run"
    _write(run)
    build_report(run)
    return run


def test_the_curve_shows_the_cost_falling_with_the_cache_and_reads_it(run: Path) -> None:
    (curve,) = curves(summarize(run))
    (points,) = curve.lines.values()
    low, high = points
    assert (low.ratio, high.ratio) == (0.1, 2.0)
    assert low.cost_pct == pytest.approx(20, abs=1) and low.resolved and low.ci_low > 15
    assert abs(high.cost_pct) < 1
    assert low.hit_config == pytest.approx(0.5) and high.hit_config == 1.0
    assert low.crossing.decrypted == pytest.approx(3 * 5000 * PAGE)
    assert low.floor_s == pytest.approx(3 * 5000 * PAGE / (4 * GB))
    assert low.cache_bytes == 10**7
    md = (run / "report" / "summary.md").read_text()
    assert "## TDE cost curve: overhead vs cache size" in md
    assert re.search(r"At a 10% cache/data ratio \(cache hit ratio 50\.0%\), tde:aes-256-ctr costs \+(19\.\d|20\.\d)% "
                     r"time \(95% CI 1\d\.\d–2\d\.\d%\)", md)
    assert "at a 200% cache/data ratio (cache hit ratio 100%), tde:aes-256-ctr has no measurable cost" in md
    assert "on this machine (Test CPU)" in md and "The cost falls as the cache holds more of the data" in md
    html = (run / "report" / "index.html").read_text()
    assert 'id="memory-curve"' in html and 'href="#memory-curve"' in html and "<svg" in html


def test_the_floor_divides_the_bytes_the_engine_counted(run: Path) -> None:
    (ef,) = compute(summarize(run)).floors
    row = next(r for r in ef.rows if r.config == "m-tde@mem0.1" and r.step == "q06")
    assert row.basis == COUNTED and row.hit_ratio == pytest.approx(0.5)
    assert row.floor_s == pytest.approx(floor_for_spec("tde:aes-256-ctr", SPEEDS, 5000 * PAGE, 0))
    total = next(r for r in ef.rows if r.config == "m-tde@mem0.1" and r.step == "total")
    assert total.read_bytes == pytest.approx(3 * 5000 * PAGE) and total.overhead.overhead_pct == pytest.approx(20, abs=1)
    md = (run / "report" / "summary.md").read_text()
    assert "| tde:aes-256-ctr @ memory ratio 0.1 | q06 | 50.0% | 78.1 MiB | 0 B | counted |" in md


def test_hit_ratio_and_bytes_decrypted_stand_beside_the_overheads(run: Path) -> None:
    md = (run / "report" / "summary.md").read_text()
    summary = md[md.index("## Summary: mariadb"):md.index("## Per query")]
    assert "| m-tde@mem0.1 |" in summary and "hit 50.0% · 234.4 MiB decrypted" in summary
    assert "| m-tde |" not in summary  # configs swept over memory ratios show up at each ratio only
    queries = md[md.index("## Per query"):]
    assert "hit 50.0% · 78.1 MiB decrypted" in queries and "hit 100% · 0 B decrypted" in queries


def test_without_counters_the_floor_falls_back_to_disk_io_and_says_so(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write(run, counters=False)
    build_report(run)
    (ef,) = compute(summarize(run)).floors
    assert {r.basis for r in ef.rows} == {FALLBACK}
    md = (run / "report" / "summary.md").read_text()
    assert "disk IO (fallback)" in md and "Rows counted from disk IO (fallback)" in md
