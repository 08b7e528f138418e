"""A baseline across engines: the plan's checks, ENGINE/SPEC on the command line, the report's layers table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tdebench.api.engine import Config
from tdebench.api.plan import RunPlan, plan_from_json
from tdebench.cli.run import experiment_from_options, plan_from_experiment, split_engine_specs
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.report import layers_view, summarize
from tests.unit.test_report_build import write_measurements

ROOT_AND_LOOP = os.geteuid() == 0 and Path("/dev/loop-control").exists()


def _configs(*pairs: tuple[str, str]) -> list[Config]:
    return [Config(engine, parse_spec(spec)) for engine, spec in pairs]


def test_the_baseline_must_be_a_plain_config_of_the_run():
    configs = _configs(("sqlite", "none"), ("sqlite3mc", "none"), ("sqlite3mc", "sqlite3mc:chacha20"))
    assert RunPlan(configs=configs, baseline="sqlite-none").baseline == "sqlite-none"
    with pytest.raises(UsageError, match="'sqlite-nope' is not a config of this run.*sqlite-none, sqlite3mc-none"):
        RunPlan(configs=configs, baseline="sqlite-nope")
    with pytest.raises(UsageError, match="is not plain"):
        RunPlan(configs=configs, baseline="sqlite3mc-sqlite3mc-chacha20")
    plan = RunPlan(configs=configs, baseline="sqlite3mc-none", seed=1)
    assert plan_from_json(plan.to_json()).baseline == "sqlite3mc-none"  # --resume keeps it
    assert "baseline" not in RunPlan(configs=configs, seed=1).to_json()


def test_engine_qualified_specs_go_to_that_engine_only():
    items = split_engine_specs("none,sqlite3mc:aegis,sqlite/fs:fscrypt", ["sqlite", "sqlite3mc"])
    assert [(o, str(s)) for o, s in items] == [(None, "none"), (None, "sqlite3mc:aegis"), ("sqlite", "fs:fscrypt")]
    with pytest.raises(UsageError, match="names engine 'mariadb', which --engine does not list"):
        split_engine_specs("none,mariadb/none", ["sqlite", "sqlite3mc"])
    with pytest.raises(UsageError, match="listed twice"):
        split_engine_specs("sqlite/fs:fscrypt,fs:fscrypt", ["sqlite", "sqlite3mc"])
    e = experiment_from_options("sqlite,sqlite3mc", "none,sqlcipher:aes-256-cbc,sqlite3mc:chacha20,sqlite3mc/none",
                                {}, {})
    assert [(s.name, s.encryption) for s in e.engines] == [
        ("sqlite", ["none", "sqlcipher:aes-256-cbc"]), ("sqlite3mc", ["none", "sqlite3mc:chacha20", "none"])]


@pytest.mark.skipif(not ROOT_AND_LOOP, reason="ext4 images need root and loop devices")
def test_an_fscrypt_spec_of_one_engine_puts_every_twin_on_an_image():
    e = experiment_from_options("sqlite,sqlite3mc", "none,sqlite3mc:chacha20,sqlite/fs:fscrypt", {},
                                {"baseline": "sqlite-none"})
    plan = plan_from_experiment(e)
    assert {c.label: c.settings.get("storage") for c in plan.configs} == {
        "sqlite-none": "ext4-loop", "sqlite-fs-fscrypt": "ext4-loop", "sqlite3mc-none": "ext4-loop",
        "sqlite3mc-sqlite3mc-chacha20": "ext4-loop"}
    assert plan.baseline == "sqlite-none"


def _run(tmp_path: Path, baseline: str | None) -> Path:
    """Engines a (the baseline's library) and b (same SQL family, twice as fast plain), c (another family)."""
    times = {"a-none": 1.0, "a-x": 1.5, "b-none": 0.5, "b-y": 0.6, "c-none": 2.0}
    records = [{"block": b, "trial": b, "config": c, "engine": c[0], "encryption": "none" if c.endswith("none")
                else "tde:aes-256-ctr" if c == "a-x" else "fs:fscrypt", "workload": "tpch", "test": "power",
                "step": "total", "metric": "elapsed", "value": v * (1 + 0.01 * b), "unit": "s"}
               for b in range(1, 7) for c, v in times.items()]
    run = tmp_path / "run"
    write_measurements(run, records)
    family = {"a": "sqlite", "b": "sqlite", "c": "mariadb"}
    manifest = {"plan": {"workload": "tpch", **({"baseline": baseline} if baseline else {})},
                "configs": [{"label": c, "engine": c[0], "engine_version": f"lib {c[0]} 1.{ord(c[0])}",
                             "dialect": {"family": family[c[0]]}} for c in times]}
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_layers_table_compares_across_engines_and_names_the_library_difference(tmp_path):
    t = layers_view.layers_table(summarize(_run(tmp_path, "a-none")))
    assert t is not None and t.baseline == "a-none"
    rows = {r.row.label: r for r in t.rows}
    assert list(rows)[:2] == ["a-none", "a-x"]  # the baseline's engine first
    assert rows["a-none"].versus_baseline is None and rows["c-none"].versus_baseline is None  # other family
    assert rows["b-none"].versus_baseline.pct == pytest.approx(-50.0, abs=0.5)
    assert rows["b-y"].versus_baseline.pct == pytest.approx(-40.0, abs=0.5)
    assert rows["b-y"].row.overhead.overhead_pct == pytest.approx(20.0, abs=0.5)  # its own plain twin
    assert (rows["a-x"].layer, rows["b-y"].layer) == ("engine (TDE)", "kernel filesystem (ext4 fscrypt)")
    assert len(t.notes) == 1 and "lib b 1.98" in t.notes[0] and "lib a 1.97" in t.notes[0]
    assert "b-none (no encryption) shows alone: -50.0%" in t.notes[0]
    md = "\n".join(layers_view.md_lines(summarize(_run(tmp_path / "again", "a-none"))))
    assert "vs baseline a-none (95% CI)" in md and "| b-y | kernel filesystem (ext4 fscrypt) |" in md


def test_layers_table_without_baseline_shows_own_twins_only(tmp_path):
    t = layers_view.layers_table(summarize(_run(tmp_path, None)))
    assert t is not None and t.baseline is None and not t.notes
    assert all(r.versus_baseline is None for r in t.rows)


def test_layers_table_at_a_memory_ratio(tmp_path):
    """Labels carry the ratio (a-none@mem0.25): the baseline and the library note follow it."""
    run = _run(tmp_path, "a-none")
    text = (run / "measurements.csv").read_text()
    for c in ("a-none", "a-x", "b-none", "b-y", "c-none"):
        text = text.replace(f",{c},", f",{c}@mem0.25,")
    (run / "measurements.csv").write_text(text)
    t = layers_view.layers_table(summarize(run))
    rows = {r.row.label: r for r in t.rows}
    assert rows["b-none@mem0.25"].versus_baseline.pct == pytest.approx(-50.0, abs=0.5)
    assert len(t.notes) == 1 and "b-none@mem0.25 (no encryption) shows alone: -50.0%" in t.notes[0]
