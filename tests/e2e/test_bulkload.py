"""End to end: `tdebench run --workload load` (client INSERT batches vs the bulk path) on SQLite/SQLCipher."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_crud import ok_rows, tdebench
from tests.resultdoc import undocumented


def test_client_and_bulk_loads_per_table(tmp_path: Path, tpch_sf001) -> None:
    out = tmp_path / "run"
    result = tdebench("run", "--engine", "sqlite", "--workload", "load", "--trials", "1", "--warmup", "0",
                      "--workload-option", "variants=bulk,insert_keys", "--workload-option", "batch_rows=5000",
                      "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent))
    assert result.returncode == 0, result.stderr[-3000:]
    assert undocumented(out) == []
    rows = [r for r in ok_rows(out) if r["test"] == "ingest"]
    for config in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        mine = {(r["step"], r["metric"]): float(r["value"]) for r in rows if r["config"] == config}
        for variant in ("bulk", "insert_keys"):
            assert mine[(f"{variant}_lineitem", "rows")] == 60175
            assert mine[(f"{variant}_lineitem", "rows_per_s")] > 0
            assert (f"{variant}_constraints", "elapsed") in mine and (f"{variant}_total", "elapsed") in mine
        assert ("bulk_lineitem", "table_bytes") in mine or config.endswith("cbc")
    md = (out / "report" / "summary.md").read_text()
    assert "Loading through the client vs the bulk path, elapsed" in md
