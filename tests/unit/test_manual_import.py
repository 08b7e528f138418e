"""``tdebench import``: console logs -> run directory (manifest, measurements, provenance, trials)."""

from __future__ import annotations

import hashlib
import math
import shutil
from pathlib import Path

import pytest

from tdebench.api.manifest import SCHEMA_VERSION
from tdebench.errors import UsageError
from tdebench.manual.importer import ImportRequest, import_logs
from tdebench.results.rundir import RunDirectory
from tdebench.stats.load import load_measurements

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
SQLCMD = LOGS / "sqlcmd_power_stream00.log"


def _import(run_dir: Path, config: str = "plain", encryption: str = "none", logs: list[Path] | None = None,
            dialect: str = "tsql", **kwargs: object):
    return import_logs(ImportRequest(run_dir=run_dir, dialect=dialect, config=config, logs=logs or [SQLCMD],
                                     encryption=encryption, command_line=["tdebench", "import"], **kwargs))


def _rows(run_dir: Path, **match: str) -> list[dict[str, str]]:
    return [r for r in RunDirectory(run_dir).read_measurements() if all(r[k] == v for k, v in match.items())]


def test_new_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = _import(run, engine_version="16.0.4185.3", settings={"max server memory (MB)": "8192"})
    assert result.trials == [1]
    assert result.status == {"ok": 5, "failed": 1, "missing": 16}
    manifest = RunDirectory(run).read_manifest()
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["host"] == "unknown (imported)"
    assert manifest["plan"]["workload"] == "tpch" and manifest["plan"]["workload_options"]["sf"] == 1.0
    assert manifest["plan"]["workload_options"]["tests"] == ["power"] and manifest["plan"]["trials"] == 1
    config = manifest["configs"][0]
    assert {k: config[k] for k in ("label", "engine", "encryption", "engine_version", "settings")} == {
        "label": "plain", "engine": "sqlserver", "encryption": "none", "engine_version": "16.0.4185.3",
        "settings": {"max server memory (MB)": "8192"}}
    log = manifest["imports"][0]["logs"][0]
    assert log["file"] == SQLCMD.name and log["sha256"] == hashlib.sha256(SQLCMD.read_bytes()).hexdigest()
    assert log["streams"][0]["failed"] == 1 and log["streams"][0]["missing"] == 16
    assert "q13" in log["streams"][0]["warnings"]

    q14 = {r["metric"]: r for r in _rows(run, step="q14")}
    assert set(q14) == {"elapsed", "cpu", "compile"}
    assert float(q14["elapsed"]["value"]) == 1.321 and float(q14["cpu"]["value"]) == 1.235
    assert q14["elapsed"]["unit"] == "s" and q14["elapsed"]["test"] == "power" and q14["elapsed"]["stream"] == "0"
    assert q14["elapsed"]["workload"] == "tpch" and q14["elapsed"]["block"] == "1"
    assert q14["elapsed"]["started_at"] == "2026-03-02T09:15:01.123Z"
    q09, q20 = _rows(run, step="q09")[0], _rows(run, step="q20")[0]
    assert q09["status"] == "failed" and math.isnan(float(q09["value"]))
    assert q20["status"] == "missing" and math.isnan(float(q20["value"]))  # never zero
    total = _rows(run, step="total")[0]
    assert total["status"] == "failed" and math.isnan(float(total["value"]))
    assert float(_rows(run, step="wall")[0]["value"]) == pytest.approx(8.641976)


def test_second_config_is_added_and_trials_count_up(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _import(run, "plain")
    _import(run, "tde", "tde:aes-256")
    _import(run, "plain")
    manifest = RunDirectory(run).read_manifest()
    assert [(c["label"], c["encryption"]) for c in manifest["configs"]] == [("plain", "none"), ("tde", "tde:aes-256")]
    assert sorted({(r["config"], r["trial"]) for r in _rows(run)}) == [("plain", "1"), ("plain", "2"), ("tde", "1")]
    assert manifest["plan"]["blocks"] == [{"block": 1, "warmup": False, "order": ["plain", "tde"]},
                                          {"block": 2, "warmup": False, "order": ["plain"]}]
    assert len(manifest["imports"]) == 3
    loaded = load_measurements(run)
    assert loaded.encryption == {"plain": "none", "tde": "tde:aes-256"}
    assert sum(loaded.failed.values()) == 3 * 3  # q09, the total and the wall time, per import (as `run` does)
    assert all(math.isfinite(r.value) for r in loaded.rows)


def test_explicit_trial_and_duplicates(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _import(run, trial=3).trials == [3]
    with pytest.raises(UsageError, match="already has stream 0 of trial 3"):
        _import(run, trial=3)
    assert _import(run).trials == [4]


def test_several_runs_of_one_stream_become_consecutive_trials(tmp_path: Path) -> None:
    copy = tmp_path / "again.log"
    shutil.copy(SQLCMD, copy)
    result = _import(tmp_path / "run", logs=[SQLCMD, copy])
    assert result.trials == [1, 2]


def test_warmup(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _import(run, warmup=True)
    rows = _rows(run, step="q14", metric="elapsed")
    assert rows[0]["block"] == "0" and rows[0]["trial"] == "0" and rows[0]["status"] == "warmup"
    assert _import(run).trials == [1]
    assert RunDirectory(run).read_manifest()["plan"]["warmup_trials"] == 1


def test_refusals(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _import(run, "plain")
    with pytest.raises(UsageError, match="already in"):
        _import(run, "plain", "tde:aes-256")
    with pytest.raises(UsageError, match="written for dialect tsql"):
        _import(run, "x", dialect="oracle")
    with pytest.raises(UsageError, match="bad config label"):
        _import(run, "has space")
    with pytest.raises(UsageError, match="unknown encryption spec"):
        _import(run, "y", "rot13")
    with pytest.raises(UsageError, match="does not exist"):
        _import(run, "z", logs=[tmp_path / "nope.log"])
    with pytest.raises(UsageError, match="scale factor"):
        _import(run, "w", sf=10)


def test_log_without_timing_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "notiming.log"
    log.write_text("tdebench:script v1 dialect=oracle test=power stream=0 sf=1 q15=with\n"
                   "tdebench:begin q14 stream 0\n\nPROMO_REVENUE\n-------------\n   16.3807786\n\n"
                   "tdebench:end q14 stream 0\n")
    with pytest.raises(UsageError, match="not a single timing line"):
        _import(tmp_path / "run", logs=[log], dialect="oracle")
    assert not (tmp_path / "run").exists()


def test_non_empty_directory_without_manifest_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "something.txt").write_text("x")
    with pytest.raises(UsageError, match="not empty"):
        _import(run)


@pytest.mark.parametrize("name,dialect,ok", [("sqlplus_power_stream00.log", "oracle", 5),
                                             ("mysql_vvv_power_stream00.log", "mysql", 5),
                                             ("psql_power_stream00.log", "postgres", 5)])
def test_every_fixture_imports(tmp_path: Path, name: str, dialect: str, ok: int) -> None:
    result = _import(tmp_path / "run", logs=[LOGS / name], dialect=dialect)
    assert result.status["ok"] == ok
    assert result.status["missing"] + result.status["failed"] + ok == 22
