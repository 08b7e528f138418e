"""Plan validation and the randomized, interleaved block order."""

from __future__ import annotations

import pytest

from tdebench.encryption import parse_spec
from tdebench.engines.base import Config
from tdebench.errors import UsageError
from tdebench.runner.plan import RunPlan

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
    ({"sf": 0}, "--sf"), ({"sf": -1}, "--sf"), ({"trials": 0}, "--trials"), ({"warmup_trials": 2}, "--warmup"),
])
def test_invalid_plans_are_usage_errors(kwargs, fragment):
    with pytest.raises(UsageError, match=fragment):
        RunPlan(CONFIGS, **kwargs)


def test_duplicate_configs_are_rejected():
    with pytest.raises(UsageError):
        RunPlan([CONFIGS[0], CONFIGS[0]])
