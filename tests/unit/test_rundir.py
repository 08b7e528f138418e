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
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION == 4


@pytest.mark.parametrize("version", [0, 5, "2", None])
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


def test_rows_follow_the_header_of_a_file_written_before_rounds(tmp_path):
    """A run of schema version 2 has no 'round' column: a resumed run appends rows in its own column order, and
    refuses round-paired rows it could not hold."""
    from tdebench.api.measurement import COLUMNS, Measurement
    rundir = RunDirectory.create(tmp_path / "run")
    old = [c for c in COLUMNS if c != "round"]
    rundir.measurements_path.write_text(",".join(old) + "\n")
    rundir.append([Measurement("r", 1, 1, "a", "sqlite", "none", "tpcc", "tpcc", "vu1", "tpm", 5.0, "tpm")])
    rows = rundir.read_measurements()
    assert list(rows[0]) == old and rows[0]["value"] == "5.0"
    with pytest.raises(UsageError, match="no 'round' column"):
        rundir.append([Measurement("r", 1, 1, "a", "sqlite", "none", "tpcc", "tpcc", "vu1", "tpm", 5.0, "tpm",
                                   round=1)])


def test_round_rows_pair_per_round(tmp_path):
    """Values of an interleaved schedule are one observation per block and round, paired per round."""
    from tdebench.api.measurement import Measurement
    from tdebench.stats.load import load_measurements
    from tdebench.stats.overhead import pair_by_block
    rundir = RunDirectory.create(tmp_path / "run")
    rows = [Measurement("r", b, b, c, "e", enc, "tpcc", "tpcc", "vu1", "tpm", v + r, "tpm", round=r)
            for b in (1, 2) for r in (1, 2, 3) for c, enc, v in (("a", "none", 100.0), ("b", "x", 110.0))]
    rundir.append(rows)
    m = load_measurements(rundir.path)
    a = [s for k, s in m.series.items() if k.config == "a"][0]
    b = [s for k, s in m.series.items() if k.config == "b"][0]
    assert a.n == 6
    base, other = pair_by_block(a, b)
    assert (other - base == 10.0).all() and list(base) == [101.0, 102.0, 103.0] * 2
