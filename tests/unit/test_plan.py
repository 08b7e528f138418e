"""Plan validation and the randomized, interleaved block order."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tdebench.encryption import parse_spec
from tdebench.api.engine import Config
from tdebench.errors import UsageError
from tdebench.api.plan import RunPlan

CONFIGS = [Config("sqlite", parse_spec("none")), Config("sqlite", parse_spec("sqlcipher:aes-256-cbc"))]


def test_blocks_are_warmup_then_trials_each_with_every_config():
    plan = RunPlan(CONFIGS, trials=5, seed=7)
    blocks = plan.blocks()
    assert [b.number for b in blocks] == [0, 1, 2, 3, 4, 5]
    assert blocks[0].warmup and not blocks[1].warmup
    for block in blocks:
        assert sorted(block.order) == sorted(plan.labels)


def test_block_order_is_random_but_reproducible_from_the_seed():
    orders = {tuple(b.order for b in RunPlan(CONFIGS, trials=8, seed=s).blocks()) for s in range(20)}
    assert len(orders) > 1
    assert RunPlan(CONFIGS, trials=8, seed=3).blocks() == RunPlan(CONFIGS, trials=8, seed=3).blocks()
    assert RunPlan(CONFIGS, trials=3, seed=3).to_json()["blocks"][1]["order"]


@pytest.mark.parametrize("kwargs, fragment", [
    ({"trials": 0}, "--trials"), ({"warmup_trials": 2}, "--warmup"), ({"cache": "hot"}, "--cache"),
])
def test_invalid_plans_are_usage_errors(kwargs, fragment):
    with pytest.raises(UsageError, match=fragment):
        RunPlan(CONFIGS, **kwargs)


@pytest.mark.parametrize("sf", [0, -1, float("inf")])
def test_a_bad_scale_factor_is_a_usage_error_of_the_tpch_options(sf):
    from tdebench.workloads.tpch.options import parse_options

    with pytest.raises(UsageError, match="'sf'"):
        parse_options({"sf": sf})


def test_a_plan_of_manifest_schema_1_keeps_its_tpch_options():
    from tdebench.api.plan import plan_from_json

    old = {**RunPlan(CONFIGS, trials=2, seed=3).to_json(), "sf": 0.1, "tests": ["power", "throughput"], "streams": 2}
    old.pop("workload_options")
    plan = plan_from_json(old)
    assert plan.workload_options == {"sf": 0.1, "tests": ["power", "throughput"], "streams": 2}
    assert plan.blocks() == RunPlan(CONFIGS, trials=2, seed=3).blocks()


def test_duplicate_configs_are_rejected():
    with pytest.raises(UsageError):
        RunPlan([CONFIGS[0], CONFIGS[0]])


def test_a_resumed_plan_keeps_the_targets_labels():
    """--resume rebuilds the plan from the manifest: configs named by the user (external targets, --target
    LABEL=URL) keep their names, and so their labels, run directories and pairs."""
    import json

    from tdebench.api.plan import plan_from_json

    named = [replace(c, name=f"target-{i}") for i, c in enumerate(CONFIGS)]
    plan = plan_from_json(json.loads(json.dumps(RunPlan(named, trials=2, seed=3).to_json())))
    assert [c.label for c in plan.configs] == ["target-0", "target-1"]
    assert plan.blocks() == RunPlan(named, trials=2, seed=3).blocks()
