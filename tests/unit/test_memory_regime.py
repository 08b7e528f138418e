"""The memory sweep without servers: ratio parsing, regime labels, the plan's blocks, twin pairing, sizing caches
from the plain twin's data, the memory checks and the stand-in counter probe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tdebench.api.cache import Cache
from tdebench.api.engine import Config, Engine, Instance
from tdebench.api.plan import RunPlan, plan_from_json
from tdebench.api.regime import parse_ratios, ratio_of, regime_label, split_label
from tdebench.api.trial import ConfigState, Recorder
from tdebench.encryption import parse_spec
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.runner.memory import MemoryRegimes
from tdebench.stats.load import parse_rows
from tdebench.stats.overhead import default_baselines

GIB = 1024 ** 3


# ratios and labels -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [("0.05,0.25,1,2", (0.05, 0.25, 1.0, 2.0)), ("2, 0.1", (2.0, 0.1)),
                                            (0.5, (0.5,)), ([0.1, 2], (0.1, 2.0))])
def test_ratios_parse_in_the_given_order(text: Any, expected: tuple[float, ...]) -> None:
    assert parse_ratios(text) == expected


@pytest.mark.parametrize("text, says", [("0", "at least"), ("x", "not a number"), ("0.1,0.1", "twice"),
                                        ("-1", "at least"), ("nan", "at least"), ("inf", "at least"),
                                        ("", "no ratio given"), (True, "not a cache/data ratio")])
def test_bad_ratios_are_refused_with_the_reason(text: Any, says: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_ratios(text)
    assert says in err.value.problem and "--memory-ratio" in err.value.problem
    assert "0.05,0.25,1,2" in (err.value.fix or "")


def test_regime_labels_round_trip() -> None:
    assert regime_label("mariadb-none", 0.25) == "mariadb-none@mem0.25"
    assert regime_label("mariadb-none", 2.0) == "mariadb-none@mem2"
    assert regime_label("mariadb-none", None) == "mariadb-none"
    assert split_label("mariadb-tde-aes-256-ctr@mem0.05") == ("mariadb-tde-aes-256-ctr", 0.05)
    assert split_label("a@b") == ("a@b", None) and ratio_of("plain") is None


# the plan ---------------------------------------------------------------------------------------------------
def _configs() -> list[Config]:
    return [Config("sqlite", parse_spec("none")), Config("sqlite", parse_spec("sqlcipher:aes-256-cbc"))]


def test_without_ratios_the_blocks_are_unchanged() -> None:
    plan = RunPlan(_configs(), trials=3, seed=7)
    blocks = plan.blocks()
    assert [b.number for b in blocks] == [0, 1, 2, 3]
    assert [b.warmup for b in blocks] == [True, False, False, False]
    assert all(b.memory_ratio is None for b in blocks)
    assert "memory_ratios" not in plan.to_json()


def test_each_ratio_runs_its_own_warm_up_and_trials_with_block_numbers_of_their_own() -> None:
    plan = RunPlan(_configs(), trials=3, seed=7, memory_ratios=(0.1, 2.0))
    blocks = plan.blocks()
    assert [(b.number, b.memory_ratio, b.warmup) for b in blocks] == [
        (0, 0.1, True), (1, 0.1, False), (2, 0.1, False), (3, 0.1, False),
        (4, 2.0, True), (5, 2.0, False), (6, 2.0, False), (7, 2.0, False)]
    # the first ratio's blocks are the blocks of the same plan without a sweep (same seed, same orders)
    assert [b.order for b in blocks[:4]] == [b.order for b in RunPlan(_configs(), trials=3, seed=7).blocks()]
    again = plan_from_json(plan.to_json())
    assert again.memory_ratios == (0.1, 2.0) and again.blocks() == blocks
    without_warmup = RunPlan(_configs(), trials=2, warmup_trials=0, seed=7, memory_ratios=(0.5, 1.0)).blocks()
    assert [(b.number, b.warmup) for b in without_warmup] == [(1, False), (2, False), (4, False), (5, False)]


def test_a_plan_refuses_bad_ratios() -> None:
    with pytest.raises(UsageError):
        RunPlan(_configs(), memory_ratios=(0.0,))


# twins pair at the same ratio --------------------------------------------------------------------------------
def _rows(configs: list[tuple[str, str, float]]) -> list[dict[str, str]]:
    rows = []
    for block in (1, 2, 3):
        for config, enc, value in configs:
            rows.append({"run_id": "r", "block": str(block), "trial": str(block), "config": config,
                         "engine": "mariadb", "encryption": enc, "workload": "tpch", "test": "power",
                         "stream": "0", "step": "total", "metric": "elapsed", "value": str(value + block * 0.01),
                         "unit": "s", "status": "ok"})
    return rows


def test_each_encrypted_config_is_compared_with_the_plain_twin_at_its_own_ratio() -> None:
    m = parse_rows(_rows([("m-none@mem0.1", "none", 10.0), ("m-tde@mem0.1", "tde:aes-256-ctr", 12.0),
                          ("m-none@mem2", "none", 2.0), ("m-tde@mem2", "tde:aes-256-ctr", 2.0)]))
    assert default_baselines(m) == {"m-tde@mem0.1": "m-none@mem0.1", "m-tde@mem2": "m-none@mem2"}
    plain = parse_rows(_rows([("m-none", "none", 1.0), ("m-tde", "tde:aes-256-ctr", 1.1)]))
    assert default_baselines(plain) == {"m-tde": "m-none"}


# sizing the caches ---------------------------------------------------------------------------------------------
class _Instance(Instance):
    """Records resize calls; nothing else is used."""

    def __init__(self, config: Config) -> None:
        super().__init__(config, Path("/nonexistent"))
        self.resized: list[int] = []
        self.sources: list[str] = []

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def connect(self) -> Any: ...
    def bulk_load(self, conn: Any, table: Any, path: Path) -> int: return 0
    def encryption_status(self) -> dict[str, Any]: return {"enabled": False}

    @property
    def data_dir(self) -> Path:
        return Path("/nonexistent")

    def cache(self) -> "_Cache":
        return _Cache(self)


class _Cache(Cache):
    setting = "cache_size"
    page_sources = ("disk", "memory")

    def resize(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        self.instance.resized.append(cache_bytes)
        self.instance.sources.append(page_source)
        return {"cache_size": str(cache_bytes), "cache_bytes": cache_bytes}


class _MemoryOnlyCache(_Cache):
    page_sources = ("memory",)


class _Engine(Engine):
    name = "fake"
    cache_type = _Cache

    def supported_specs(self) -> list[Any]: return []
    def default_encrypted_spec(self) -> Any: return parse_spec("none")
    def check_available(self) -> None: ...
    def version(self) -> str: return "1"
    def create_instance(self, config: Config, workdir: Path, database: str = "") -> Instance: raise NotImplementedError


class _NoCache(_Engine):
    cache_type = None


def _fake_configs() -> list[Config]:
    return [Config("fake", parse_spec("none")), Config("fake", parse_spec("tde:aes-256-ctr"))]


def test_twins_at_a_ratio_get_the_same_bytes_from_the_plain_twins_data_once_per_ratio() -> None:
    configs = _fake_configs()
    plan = RunPlan(configs, trials=1, memory_ratios=(0.25, 2.0), seed=1)
    regimes = MemoryRegimes(plan, total_memory=64 * GIB)
    manifest: dict[str, Any] = {"configs": [
        {"label": "fake-none", "engine": "fake", "encryption": "none", "settings": {"a": "1"},
         "storage": {"totals": {"total_bytes": 400 * 2**20}}, "storage_bytes": 999 * 2**20},
        {"label": "fake-tde-aes-256-ctr", "engine": "fake", "encryption": "tde:aes-256-ctr", "settings": {"a": "1"},
         "storage": {"totals": {"total_bytes": 404 * 2**20}}}]}
    states = {c.label: ConfigState(c, _Engine(), _Instance(c)) for c in configs}
    said: list[str] = []
    for block in plan.blocks():
        for label in block.order:
            regimes.apply(states[label], block, manifest, said.append)
    for state in states.values():  # once per ratio, the same bytes for both: 0.25 and 2 × the plain twin's data
        assert state.instance.resized == [100 * 2**20, 800 * 2**20]
    assert manifest["memory"]["data_bytes"] == {"fake": 400 * 2**20}
    regime = manifest["memory"]["regimes"]["fake-tde-aes-256-ctr@mem0.25"]
    assert regime["cache_bytes"] == 100 * 2**20 and regime["config"] == "fake-tde-aes-256-ctr"
    labels = [c["label"] for c in manifest["configs"]]
    assert labels == ["fake-none", "fake-tde-aes-256-ctr", "fake-none@mem0.25", "fake-tde-aes-256-ctr@mem0.25",
                      "fake-none@mem2", "fake-tde-aes-256-ctr@mem2"]
    entry = next(c for c in manifest["configs"] if c["label"] == "fake-none@mem2")
    assert entry["base_label"] == "fake-none" and entry["settings"]["cache_size"] == str(800 * 2**20)
    assert "storage" not in entry and len(said) == 4
    assert all(s.instance.sources == ["disk", "disk"] for s in states.values())  # the engine's default, recorded
    assert regime["page_source"] == "disk" and "misses read from the disk" in said[0]


class _MemoryOnly(_Engine):
    cache_type = _MemoryOnlyCache


def test_the_page_source_asked_for_reaches_every_instance_and_an_engine_without_it_is_refused() -> None:
    configs = _fake_configs()
    plan = RunPlan(configs, trials=1, memory_ratios=(0.5,), seed=1, page_source="memory")
    regimes = MemoryRegimes(plan, total_memory=64 * GIB)
    regimes.check_before_work({"fake": _Engine()}, 10**6)
    manifest: dict[str, Any] = {"configs": [{"label": c.label, "engine": "fake", "encryption": str(c.spec),
                                             "storage": {"totals": {"total_bytes": 2**20}}} for c in configs]}
    state = ConfigState(configs[1], _Engine(), _Instance(configs[1]))
    regimes.apply(state, plan.blocks()[1], manifest, lambda _: None)
    assert state.instance.sources == ["memory"]
    assert manifest["memory"]["regimes"]["fake-tde-aes-256-ctr@mem0.5"]["page_source"] == "memory"
    disk = RunPlan(configs, memory_ratios=(0.5,), page_source="disk")
    with pytest.raises(UsageError) as err:
        MemoryRegimes(disk).check_before_work({"fake": _MemoryOnly()}, 10**6)
    assert err.value.problem == "--page-source disk: the pages fake's cache misses come from memory only"
    assert "--page-source memory" in err.value.fix


@pytest.mark.parametrize("source, says", [("ssd", "--page-source must be disk or memory, not 'ssd'"),
                                          ("memory", "it needs --memory-ratio")])
def test_a_plan_refuses_a_bad_page_source(source: str, says: str) -> None:
    ratios: tuple[float, ...] = (0.5,) if source == "ssd" else ()
    with pytest.raises(UsageError) as err:
        RunPlan(_fake_configs(), memory_ratios=ratios, page_source=source)
    assert says in err.value.problem


def test_the_page_source_survives_the_manifest() -> None:
    plan = RunPlan(_fake_configs(), memory_ratios=(0.5,), page_source="memory", seed=3)
    assert plan_from_json(plan.to_json()).page_source == "memory"
    assert "page_source" not in RunPlan(_fake_configs(), memory_ratios=(0.5,)).to_json()


def test_rows_of_a_ratio_carry_its_label_and_each_ratio_has_a_warm_up() -> None:
    plan = RunPlan(_fake_configs(), trials=2, memory_ratios=(0.5, 1.0), seed=1)
    regimes = MemoryRegimes(plan, total_memory=64 * GIB)
    warm_up_of_second = plan.blocks()[3]
    assert warm_up_of_second.number == 3 and warm_up_of_second.warmup
    rec = Recorder("r", 3, "fake-none", "fake", "none")
    regimes.label_recorder(rec, warm_up_of_second)
    assert (rec.config, rec.status) == ("fake-none@mem1", "warmup")
    assert regimes.trial_name(plan.blocks()[4]) == "trial 1/2"
    assert regimes.row_label("fake-none", plan.blocks()[1]) == "fake-none@mem0.5"


def test_an_engine_without_a_cache_size_is_refused_before_any_work() -> None:
    plan = RunPlan(_fake_configs(), memory_ratios=(0.5,))
    with pytest.raises(UsageError) as err:
        MemoryRegimes(plan).check_before_work({"fake": _NoCache()}, 10**6)
    assert "has no cache size" in err.value.problem


def test_a_ratio_that_cannot_fit_in_memory_is_refused_by_the_estimate_and_by_the_real_sizes() -> None:
    plan = RunPlan(_fake_configs(), memory_ratios=(0.5, 1000.0))
    with pytest.raises(EnvironmentProblem) as err:  # UNMEASURED footprint: 4 bytes per input byte
        MemoryRegimes(plan, total_memory=16 * GIB).check_before_work({"fake": _Engine()}, 10 * 2**20)
    assert "--memory-ratio 1000 needs" in err.value.problem and "16.0 GiB" in err.value.problem
    MemoryRegimes(RunPlan(_fake_configs(), memory_ratios=(0.5,)), total_memory=16 * GIB).check_before_work(
        {"fake": _Engine()}, 10 * 2**20)
    regimes = MemoryRegimes(RunPlan(_fake_configs(), memory_ratios=(2.0,)), total_memory=4 * GIB)
    manifest = {"configs": [{"label": c.label, "engine": "fake", "encryption": str(c.spec),
                             "storage": {"totals": {"total_bytes": GIB}}} for c in _fake_configs()]}
    state = ConfigState(_fake_configs()[0], _Engine(), _Instance(_fake_configs()[0]))
    with pytest.raises(EnvironmentProblem) as err:
        regimes.apply(state, regimes.plan.blocks()[0], manifest, lambda _: None)
    assert "from the loaded data" in err.value.problem and state.instance.resized == []


# the stand-in counter probe ------------------------------------------------------------------------------------
class _Sampler:
    def __init__(self) -> None:
        self.marks: list[str | None] = []

    def __enter__(self) -> "_Sampler":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def mark(self, step: str | None) -> None:
        self.marks.append(step)

    def stop(self) -> str:
        return "series"

    def snapshot(self) -> str:
        return "snap"


def test_an_aa_pair_at_a_ratio_keeps_the_plan_order_whichever_twin_ran_first() -> None:
    """The twins' loads (base labels) come in the plan's order; the first block at a ratio ran the second twin
    first. The first twin is still the baseline."""
    load = [{"run_id": "r", "block": "0", "trial": "0", "config": c, "engine": "mariadb", "encryption": "none",
             "workload": "tpch", "test": "load", "stream": "", "step": "lineitem", "metric": "elapsed",
             "value": "1", "unit": "s", "status": "warmup"} for c in ("m-none", "m-none-2")]
    m = parse_rows(load + _rows([("m-none-2@mem0.25", "none", 10.0), ("m-none@mem0.25", "none", 10.0)]))
    assert default_baselines(m) == {"m-none-2@mem0.25": "m-none@mem0.25"}
