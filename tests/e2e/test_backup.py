"""End to end: `tdebench run --workload backup` on SQLite/SQLCipher and MariaDB TDE (when installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_crud import HAVE_MARIADB, ok_rows, tdebench
from tests.resultdoc import undocumented


def _verdicts(run: Path) -> dict[tuple[str, str], bool]:
    data = json.loads((run / "backups.json").read_text())
    return {(c, k): v["encrypted"] for c, entry in data["configs"].items() for k, v in entry["backups"].items()}


def test_sqlite_backups_are_timed_restored_and_scanned(tmp_path: Path, tpch_sf001) -> None:
    out = tmp_path / "run"
    result = tdebench("run", "--engine", "sqlite", "--workload", "backup", "--trials", "1", "--warmup", "0",
                      "--workload-option", "kinds=vacuum_into", "--out", str(out),
                      "--data-dir", str(Path(tpch_sf001[0]).parent))
    assert result.returncode == 0, result.stderr[-3000:]
    assert undocumented(out) == []
    verdicts = _verdicts(out)
    assert verdicts == {("sqlite-none", "vacuum_into"): False, ("sqlite-none", "vacuum_into_gz"): False,
                        ("sqlite-sqlcipher-aes-256-cbc", "vacuum_into"): True,
                        ("sqlite-sqlcipher-aes-256-cbc", "vacuum_into_gz"): True}
    steps = {(r["config"], r["step"], r["metric"]) for r in ok_rows(out) if r["test"] == "backup"}
    for config in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        for step in ("vacuum_into", "vacuum_into_restore", "vacuum_into_gz", "vacuum_into_gz_restore"):
            assert (config, step, "elapsed") in steps
        assert (config, "vacuum_into_gz", "bytes") in steps
    md = (out / "report" / "summary.md").read_text()
    assert "## Backups" in md and "VACUUM INTO (vacuum_into, vacuum_into_gz): the backup is encrypted" in md


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd is not installed")
def test_mariadb_dump_is_plaintext_under_tde_and_mariadb_backup_is_not(tmp_path: Path, tpch_sf001) -> None:
    out = tmp_path / "run"
    result = tdebench("run", "--engine", "mariadb", "--encryption", "none,tde:aes-256-ctr", "--workload", "backup",
                      "--trials", "1", "--warmup", "0", "--workload-option", "compression=none",
                      "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent),
                      "--server-setting", "innodb_buffer_pool_size=128M", "--server-setting", "innodb_log_file_size=64M")
    assert result.returncode == 0, result.stderr[-3000:]
    assert undocumented(out) == []
    v = _verdicts(out)
    assert v[("mariadb-tde-aes-256-ctr", "mariadb_backup")] is True
    assert v[("mariadb-tde-aes-256-ctr", "mariadb_dump")] is False
    assert v[("mariadb-none", "mariadb_backup")] is False
    md = (out / "report" / "summary.md").read_text()
    assert "A logical dump is plaintext even under TDE" in md
