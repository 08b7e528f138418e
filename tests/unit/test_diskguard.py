"""The disk guard's estimate: measured footprints per engine and mechanism, WAL caps, redo logs, snapshots."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tdebench.api.engine import Config
from tdebench.api.footprint import GIB, MIB, UNMEASURED, size_setting
from tdebench.api.plan import RunPlan
from tdebench.encryption import parse_spec
from tdebench.engines import get_engine
from tdebench.errors import EnvironmentProblem
from tdebench.runner import diskguard
from tdebench.workloads.tpch.datagen import TPCH_RAW_PER_SF

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
ROW = re.compile(r"^\| (\w+) \| `([^`]+)` \| ([^|]+) \| (\d+) \| ([\d.]+) \| ([\d,.]+) \| ([\d,.]+) \| ([\d,.]+) \|")


def config(engine: str, spec: str = "none", **settings: str) -> Config:
    """A config as `tdebench run` makes it: the engine's default settings, overridden by ``settings``."""
    return Config(engine, parse_spec(spec), {**get_engine(engine).default_settings(), **settings})


def need(cfg: Config, raw: float, reset: str = "none") -> int:
    est = diskguard.estimate(RunPlan([cfg], reset=reset), {"raw_bytes": int(raw)})
    assert est is not None
    return est.need


def measured_rows() -> list[tuple[Config, int, int, int]]:
    """(config, input, peak, final) bytes of every row of the measured table in docs/reliability.md."""
    text = DOCS.read_text()
    section = text[text.index("## Disk guard"):]
    section = section[:section.index("\n## ", 1)]
    rows = []
    for match in map(ROW.match, section.splitlines()):
        if match:
            engine, spec, settings, _, _, raw, peak, final = match.groups()
            pairs = dict(s.split("=", 1) for s in settings.split() if "=" in s)
            rows.append((config(engine, spec, **pairs), *(int(float(v.replace(",", "")) * MIB)
                                                          for v in (raw, peak, final))))
    return rows


def footprint(engine: str, spec: str, **settings: str):
    return diskguard.footprint(config(engine, spec, **settings))


def kind(cfg: Config) -> str:
    """The mechanism a footprint was measured for: pgcrypto's PGP messages apart from its raw ciphers."""
    if cfg.spec.mechanism == "column" and cfg.spec.cipher.startswith("pgp"):
        return "column-pgp"
    return cfg.spec.mechanism


MEASURED = {"sqlite": ["none", "sqlcipher:aes-256-cbc"], "mariadb": ["none", "tde:aes-256-ctr", "fs:gocryptfs"],
            "postgres": ["none", "column:aes-256", "column:pgp-aes256", "fs:gocryptfs"]}


# the input ---------------------------------------------------------------------------------------------
def test_raw_bytes_prefer_the_input_files_then_the_workloads_data_then_its_estimate():
    files = {"a.tbl": {"bytes": 300}, "b.tbl": {"bytes": 700}}
    assert diskguard.raw_bytes({"files": files, "raw_bytes": 5}, 9) == (1000, "input files")
    assert diskguard.raw_bytes({"raw_bytes": 5}, 9) == (5, "workload estimate")
    assert diskguard.raw_bytes({}, 2 * TPCH_RAW_PER_SF)[0] == 2 * TPCH_RAW_PER_SF
    assert diskguard.raw_bytes({}) is None
    assert diskguard.estimate(RunPlan([config("sqlite")], workload="crud"), {}) is None


@pytest.mark.parametrize("value, unit, expected", [
    ("4GB", MIB, 4 * GIB), ("1024", MIB, 1024 * MIB), ("512M", 1, 512 * MIB), ("96MiB", 1, 96 * MIB),
    ("2g", 1, 2 * GIB), ("64kB", MIB, 64 * 1024), ("1.5G", 1, int(1.5 * GIB)), ("1048576", 1, MIB),
    ("lots", 1, 7), (None, 1, 7),
])
def test_size_settings_are_read_in_the_servers_units(value, unit, expected):
    assert size_setting(value, unit, 7) == expected


# footprints per engine and mechanism -------------------------------------------------------------------
def test_every_engine_gives_a_measured_footprint_for_each_mechanism_it_has():
    for engine, specs in MEASURED.items():
        for spec in specs:
            assert footprint(engine, spec) is not UNMEASURED, (engine, spec)
    assert footprint("sqlite", "sqlcipher:aes-256-cbc").final > footprint("sqlite", "none").final
    assert footprint("postgres", "fs:gocryptfs").fixed > footprint("postgres", "none").fixed


def test_pgp_column_encryption_takes_far_more_than_raw_ciphers_and_plain():
    plain, raw, pgp = (footprint("postgres", s) for s in ("none", "column:aes-256", "column:pgp-aes256"))
    assert pgp.peak > 2 * raw.peak and raw.peak > plain.peak
    assert footprint("postgres", "column:3des") == raw
    assert footprint("postgres", "column:pgp-3des") == pgp
    assert footprint("postgres", "fs:gocryptfs-xchacha") == footprint("postgres", "fs:gocryptfs")


def test_other_scopes_and_ciphers_share_their_mechanisms_footprint_and_unknown_engines_get_the_fallback():
    assert footprint("mariadb", "tde:aes-128-cbc@tables") == footprint("mariadb", "tde:aes-256-ctr")
    assert diskguard.footprint(Config("mysql", parse_spec("tde:aes-256-cbc"))) is UNMEASURED


def test_the_estimate_sums_local_configs_and_leaves_external_servers_out():
    configs = [config("sqlite"), config("postgres"), config("postgres", "column:aes-256")]
    raw = 500 * MIB
    total = diskguard.estimate(RunPlan(configs), {"raw_bytes": raw})
    assert total is not None and total.configs == 3
    assert total.need == pytest.approx(sum(need(c, raw) for c in configs), abs=3)
    external = Config("external", parse_spec("none"), name="remote")
    only_remote = diskguard.estimate(RunPlan([external]), {"raw_bytes": raw})
    assert only_remote is not None and (only_remote.need, only_remote.configs) == (0, 0)


# logs that do not grow with the data ---------------------------------------------------------------------
def test_postgres_wal_grows_with_the_input_only_up_to_max_wal_size():
    pg = config("postgres", "column:pgp-aes256")  # the default max_wal_size, 4GB
    f = diskguard.footprint(pg)
    small, large, larger = 10 * MIB, 100 * GIB, 200 * GIB
    assert need(pg, 2 * small) - need(pg, small) == pytest.approx(small * (f.peak + f.log), abs=2)
    assert need(pg, larger) - need(pg, large) == pytest.approx(100 * GIB * f.peak, abs=2)  # WAL at its cap
    tight = config("postgres", "column:pgp-aes256", max_wal_size="1GB")
    assert need(pg, large) - need(tight, large) == pytest.approx(3 * GIB * diskguard.WAL_CAP_MARGIN, abs=2)


def test_mariadbs_redo_log_is_a_fixed_part_sized_by_innodb_log_file_size():
    default, big = config("mariadb"), config("mariadb", innodb_log_file_size="2G")
    for raw in (0, 10 * MIB, 50 * GIB):
        assert need(big, raw) - need(default, raw) == 1536 * MIB
    assert need(default, 0) >= 512 * MIB  # the default 512M redo log exists before any row is loaded


def test_a_snapshot_adds_a_copy_of_the_loaded_database_not_of_the_load_peak():
    for cfg in (config("sqlite"), config("mariadb", "tde:aes-256-ctr"), config("postgres", "column:aes-256")):
        raw = 1 * GIB
        plain, snap = need(cfg, raw), need(cfg, raw, reset="snapshot")
        assert plain <= snap <= 2 * plain


# the measurements ------------------------------------------------------------------------------------------
def test_docs_table_has_every_measured_engine_and_mechanism():
    measured = {(engine, kind(config(engine, spec))) for engine, specs in MEASURED.items() for spec in specs}
    assert {(c.engine, kind(c)) for c, *_ in measured_rows()} == measured


@pytest.mark.parametrize("cfg, raw, peak, final", measured_rows(),
                         ids=lambda v: v.label if isinstance(v, Config) else None)
def test_every_measured_peak_in_the_docs_is_covered_by_the_estimate(cfg, raw, peak, final):
    assert need(cfg, raw) >= peak
    assert need(cfg, raw, reset="snapshot") >= max(peak, 2 * final)


# checking free space on a real filesystem ------------------------------------------------------------------
def test_check_space_refuses_a_run_that_cannot_fit(tmp_path):
    plan = RunPlan([config("sqlite"), config("sqlite", "sqlcipher:aes-256-cbc")])
    with pytest.raises(EnvironmentProblem, match="not enough disk space") as caught:
        diskguard.check_space(plan, {}, tmp_path / "not" / "yet", 100000 * TPCH_RAW_PER_SF, "SF 100000")
    assert str(tmp_path) in str(caught.value)


def test_check_space_says_when_space_is_tight_and_nothing_when_it_is_plenty(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    cfg = config("sqlite")
    per_sf = need(cfg, TPCH_RAW_PER_SF) - need(cfg, 0)
    plan = RunPlan([cfg])
    tight = free / 2 / per_sf  # an SF that needs about half of what is free
    note = diskguard.check_space(plan, {}, tmp_path, int(tight * TPCH_RAW_PER_SF)) or ""
    assert "disk guard:" in note and "is less than 3x that" in note and "only" not in note, note
    assert diskguard.check_space(plan, {}, tmp_path, int(0.0001 * TPCH_RAW_PER_SF)) is None
