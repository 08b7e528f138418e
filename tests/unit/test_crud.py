"""CRUD workload without servers: options, data, SQL, and whole trials on an embedded SQLite/SQLCipher instance."""

from __future__ import annotations

from pathlib import Path

import pytest

from tdebench.encryption import parse_spec
from tdebench.engines import Config, get_engine
from tdebench.engines.postgres.column import parse_create_table
from tdebench.errors import UsageError
from tdebench.measure.storage import growth, storage_breakdown
from tdebench.api.plan import RunPlan
from tdebench.api.trial import ConfigState, Recorder
from tdebench.workloads import make_workload, workload_names
from tdebench.workloads.crud import data, schema
from tdebench.workloads.crud.ops import MIB
from tdebench.workloads.crud.options import parse_options
from tests.persons import fill_persons


# options ------------------------------------------------------------------------------------------------
def test_options_accept_strings_lists_and_numbers() -> None:
    o = parse_options({"rows": "20_000", "batches": "2000,5000,2000"})
    assert o.rows == 20000 and o.batches == [2000, 5000] and o.max_batch == 5000
    assert parse_options({"batches": [100, "200"], "rows": 1000}).batches == [100, 200]
    assert parse_options({"rows": 500, "batches": 50, "operations": "delete,select"}).operations == ["select", "delete"]
    assert parse_options({}).rows == 1_000_000


@pytest.mark.parametrize("raw, words", [
    ({"rows": 100, "batches": "200"}, ["batches", "larger than rows"]),
    ({"batches": "10,x"}, ["batches", "'10,x'", "whole numbers"]),
    ({"rows": 0}, ["rows"]),
    ({"operations": "update"}, ["operations", "select"]),
    ({"warehouses": 3}, ["unknown crud option 'warehouses'"]),
])
def test_bad_options_name_the_option_and_the_value(raw: dict, words: list[str]) -> None:
    with pytest.raises(UsageError) as err:
        parse_options(raw)
    text = err.value.one_line()
    assert all(w in text for w in words), text


def test_registry_has_the_new_workloads() -> None:
    assert {"crud", "load", "backup"} <= set(workload_names())


# data ---------------------------------------------------------------------------------------------------
def _luhn_ok(number: int) -> bool:
    digits = str(number)
    return data.luhn_digit(digits[:-1]) == int(digits[-1])


def test_persons_are_seeded_realistic_and_safe_for_tbl_files() -> None:
    rows = list(data.persons(1, 2000, seed=7))
    assert rows == list(data.persons(1, 2000, seed=7))
    assert rows != list(data.persons(1, 2000, seed=8))
    assert rows[0][5].endswith(data.KNOWN_STREET) and rows[0][6] == data.KNOWN_CITY
    assert [r[0] for r in rows] == list(range(1, 2001))
    for r in rows:
        assert 18 <= r[3] <= 99 and len(str(r[4])) == 16 and _luhn_ok(r[4])
        assert r[7] in data.GENDERS
        assert not any(isinstance(v, str) and ("|" in v or "\\" in v or "\n" in v) for v in r)
    assert {r[7] for r in rows} == set(data.GENDERS)
    assert any(len(r[6].encode()) > len(r[6]) for r in rows), "some non-ASCII cities"


def test_files_are_cached_and_read_back(tmp_path: Path) -> None:
    target, counts = data.ensure_files(tmp_path, 300, 50, seed=1)
    assert counts == {"persons": 300, "persons_stage": 50}
    again, _ = data.ensure_files(tmp_path, 300, 50, seed=1)
    assert again == target
    back = list(data.read_tbl(target / "persons_stage-50.tbl"))
    assert back == list(data.persons(301, 50, seed=1))
    assert (target / "persons.tbl").read_text().splitlines()[0].endswith("|")



def test_files_are_identical_whatever_the_number_of_writer_processes(tmp_path: Path, monkeypatch) -> None:
    """Blocks are seeded by their first id, so 1 or 3 processes (and blocks crossing the id range) give the same
    bytes; the file holds exactly the rows persons() yields."""
    monkeypatch.setattr(data, "CHUNK_ROWS", 70)
    serial, parallel = tmp_path / "one.tbl", tmp_path / "three.tbl"
    assert data.write_persons(serial, 5, 250, seed=4, workers=1) == 250
    data.write_persons(parallel, 5, 250, seed=4, workers=3)
    assert serial.read_bytes() == parallel.read_bytes()
    assert list(data.read_tbl(serial)) == list(data.persons(5, 250, seed=4))
    assert [r[0] for r in data.read_tbl(serial)] == list(range(5, 255))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temp file left"


def test_card_numbers_have_sixteen_digits_and_valid_luhn() -> None:
    import random

    rng = random.Random(3)
    cards = [str(data.card_number(rng)) for _ in range(3000)]

    def valid(number: str) -> bool:  # the textbook check, independent of data.luhn_digit
        total = 0
        for i, ch in enumerate(reversed(number)):
            d = int(ch) * (2 if i % 2 else 1)
            total += d - 9 if d > 9 else d
        return total % 10 == 0

    assert all(len(c) == 16 and valid(c) for c in cards)
    assert not valid(cards[0][:-1] + str((int(cards[0][-1]) + 1) % 10))
    assert {c[0] for c in cards} == {"4", "5"} and len({c[6:] for c in cards}) > 2900, "varied bodies"

# SQL ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialect", ["sqlite", "mariadb", "postgres"])
def test_ddl_has_the_eight_columns_and_a_primary_key(dialect: str) -> None:
    sql = schema.create_table_sql(dialect, "persons")
    for column in schema.COLUMNS:
        assert column in sql
    assert "PRIMARY KEY (id)" in sql


def test_pgcrypto_schema_keeps_only_the_key_plaintext() -> None:
    table = parse_create_table(schema.create_table_sql("postgres", "persons"))
    assert table is not None and table.inline_keys == {"id"}
    assert [c for c, _ in table.columns] == list(schema.COLUMNS)


def test_measure_sql_counts_octets_and_fixed_widths() -> None:
    sql = schema.measure_sql("sqlite", "persons", 1, 10)
    assert "LENGTH(CAST(first_name AS BLOB))" in sql and f"{schema.FIXED_BYTES_PER_ROW} * COUNT(*)" in sql
    assert "OCTET_LENGTH(city_of_birth)" in schema.measure_sql("postgres", "persons", 1, 10)


# trials on SQLite ---------------------------------------------------------------------------------------
def _plan(tmp_path: Path, spec: str) -> RunPlan:
    configs = [Config("sqlite", parse_spec(s), get_engine("sqlite").default_settings()) for s in ("none", spec)]
    return RunPlan(configs=configs, workload="crud", data_dir=tmp_path / "data", trials=1,
                   workload_options={"rows": 3000, "batches": "500,1000"})


class _Rundir:
    def __init__(self, path: Path) -> None:
        self.path = path


@pytest.fixture(params=["none", "sqlcipher:aes-256-cbc"])
def loaded(request, tmp_path: Path):
    from tdebench.api.events import RunListener

    plan = _plan(tmp_path, "sqlcipher:aes-256-cbc")
    wl = make_workload(plan, _Rundir(tmp_path))  # type: ignore[arg-type]
    wl.prepare(RunListener())
    config = next(c for c in plan.configs if str(c.spec) == request.param)
    engine = get_engine("sqlite")
    instance = engine.create_instance(config, tmp_path / "work")
    instance.start()
    state = ConfigState(config, engine, instance)
    rec = Recorder("r", 0, config.label, "sqlite", str(config.spec))
    facts = wl.load(state, rec, RunListener())
    yield wl, state, rec, facts
    instance.destroy()


def _values(rec: Recorder, step: str, metric: str) -> list[float]:
    return [m.value for m in rec.rows if m.test == "crud" and m.step == step and m.metric == metric]


def test_load_validates_and_reports_storage(loaded) -> None:
    wl, state, rec, facts = loaded
    from tdebench.api.events import RunListener

    assert wl.validate(state, rec, RunListener()) == []
    assert wl.digests[state.label][0] == 3000
    assert facts["storage_tables"]["data_dir_bytes"] > 0
    assert {m.workload for m in rec.rows} == {"crud"}
    assert {m.step for m in rec.rows if m.test == "load"} >= {"persons", "persons_stage", "total"}


def test_trial_measures_every_operation_and_resets(loaded) -> None:
    wl, state, _, _ = loaded
    rec = Recorder("r", 1, state.label, "sqlite", str(state.config.spec))
    result = wl.trial(state, 1, rec)
    assert result.failures == []
    conn = state.instance.connect()
    try:
        for k in (500, 1000):
            for op in ("select", "insert", "delete"):
                step = f"{op}_{k}"
                (elapsed,), (nbytes,), (mbs,) = (_values(rec, step, m) for m in ("elapsed", "bytes", "mb_per_s"))
                assert _values(rec, step, "rows") == [k]
                assert mbs == pytest.approx(nbytes / elapsed / MIB)
                assert _values(rec, step, "server_cpu")[0] >= 0
                assert _values(rec, step, "table_bytes_before") and _values(rec, step, "table_bytes_after")
            first, last = 1, k
            rows = conn.execute(f"SELECT {', '.join(schema.COLUMNS)} FROM persons WHERE id BETWEEN {first} "
                                f"AND {last}").fetchall()
            expected = sum(sum(len(str(v).encode()) for v in r[1:3] + r[5:8]) + schema.FIXED_BYTES_PER_ROW
                           for r in rows)
            assert _values(rec, f"select_{k}", "bytes") == [expected]
        assert conn.execute("SELECT COUNT(*), MIN(id), MAX(id) FROM persons").fetchone() == (3000, 1, 3000)
    finally:
        conn.close()
    assert _values(rec, "total", "elapsed")[0] > 0


def test_a_broken_table_is_reset_at_the_next_trial(loaded) -> None:
    wl, state, _, _ = loaded
    conn = state.instance.connect()
    conn.execute("DELETE FROM persons WHERE id <= 700")
    conn.execute(schema.insert_sql(3001, 3400))
    conn.close()
    result = wl.trial(state, 2, Recorder("r", 2, state.label, "sqlite", str(state.config.spec)))
    assert result.failures == []


def test_storage_growth_factors() -> None:
    base = {"tables": {"t": {"table_bytes": 100, "index_bytes": 10, "total_bytes": 110}}, "data_dir_bytes": 1000}
    other = {"tables": {"t": {"table_bytes": 150, "index_bytes": 10, "total_bytes": 160}}, "data_dir_bytes": 1500}
    g = growth(base, other)
    assert g["tables"]["t"]["table_bytes"] == 1.5 and g["data_dir_bytes"] == 1.5


def test_storage_breakdown_of_plain_sqlite_has_tables(tmp_path: Path) -> None:
    engine = get_engine("sqlite")
    inst = engine.create_instance(Config("sqlite", parse_spec("none"), engine.default_settings()), tmp_path)
    inst.start()
    try:
        fill_persons(inst, 500, 3)
        b = storage_breakdown(inst)
        assert b["tables"]["persons"]["rows"] == 500 and b["tables"]["persons"]["table_bytes"] > 0
        assert b["database_bytes"] > 0
    finally:
        inst.destroy()
