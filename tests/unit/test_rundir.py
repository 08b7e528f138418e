"""Run directory: measurement rows, atomic manifest, redaction, refusal to overwrite."""

from __future__ import annotations

import csv
import json

import pytest

from tdebench.encryption import SecretKey
from tdebench.errors import UsageError
from tdebench.api.manifest import SCHEMA_VERSION
from tdebench.errors import UsageError
from tdebench.results.rundir import COLUMNS, Measurement, RunDirectory


def _m(step: str, value: float, **kw) -> Measurement:
    return Measurement("run1", 1, 1, "sqlite-none", "sqlite", "none", "tpch", "power", step, "elapsed", value, "s",
                       stream=0, **kw)


def test_measurements_are_appended_with_stable_columns(tmp_path):
    rundir = RunDirectory.create(tmp_path / "run")
    rundir.append([_m("q01", 0.5), _m("q02", 1.25)])
    rundir.append([_m("total", 1.75, status="failed")])
    with open(rundir.measurements_path, newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS
    assert [r[COLUMNS.index("step")] for r in rows[1:]] == ["q01", "q02", "total"]
    assert float(rows[2][COLUMNS.index("value")]) == 1.25
    assert rows[3][COLUMNS.index("status")] == "failed"
    assert rows[1][COLUMNS.index("stream")] == "0"
    assert rundir.read_measurements()[0]["config"] == "sqlite-none"


def test_manifest_is_versioned_and_redacted(tmp_path):
    rundir = RunDirectory.create(tmp_path / "run")
    key = SecretKey.generate(256)
    rundir.write_manifest({"command_line": ["tdebench", key.hex()]})
    text = rundir.manifest_path.read_text()
    assert key.hex() not in text
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION == 2


@pytest.mark.parametrize("version", [0, 3, "2", None])
def test_a_manifest_of_an_unknown_version_is_refused_on_read(tmp_path, version):
    rundir = RunDirectory.create(tmp_path / "run")
    rundir.manifest_path.write_text(json.dumps({"schema_version": version, "run_id": "x"}))
    with pytest.raises(UsageError, match="schema_version .* cannot read"):
        rundir.read_manifest()


def test_a_manifest_of_schema_1_is_still_read(tmp_path):
    rundir = RunDirectory.create(tmp_path / "run")
    rundir.manifest_path.write_text(json.dumps({"schema_version": 1, "run_id": "x", "plan": {"sf": 0.1}}))
    assert rundir.read_manifest()["plan"]["sf"] == 0.1


def test_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "something").write_text("x")
    with pytest.raises(UsageError, match="not empty"):
        RunDirectory.create(tmp_path / "run")


def test_unwritable_directory_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UsageError, match="cannot write"):
        RunDirectory.create(blocker / "run")
