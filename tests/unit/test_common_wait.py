"""The time at a block's common wait per page read: the arithmetic, when a run records it (pages read from the disk,
encryption in the server), the rows it adds after a block, and which runs ``--precision-metric common-wait`` refuses
before any work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tdebench.api.engine import Config
from tdebench.api.measurement import Measurement
from tdebench.api.plan import RunPlan
from tdebench.api.trial import Recorder
from tdebench.api.workload import WaitSplit
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.results.rundir import RunDirectory
from tdebench.runner.common_wait import CommonWait
from tdebench.runner.precision import watched_series
from tdebench.stats.common_wait import WAITS_KEY, at_common_wait
from tdebench.workloads import make_workload

SPLIT = WaitSplit(("power", "total", "elapsed"), ("power", "total", "server_cpu"), ("counters", "total", "pages_read"))


def test_every_twin_is_charged_the_blocks_wait_per_read_and_keeps_its_own_cpu_and_reads() -> None:
    # waits 6 s and 7 s over 1000 reads each: 6.5 ms a read for both
    assert at_common_wait([10.0, 12.0], [4.0, 5.0], [1000, 1000]) == pytest.approx([10.5, 11.5])
    # a twin that reads twice as much waits twice as long at the common rate: (6 + 14) / 3000 per read
    assert at_common_wait([10.0, 19.0], [4.0, 5.0], [1000, 2000]) == pytest.approx([4 + 20 / 3, 5 + 40 / 3])
    # blocks side by side (axis 1) are pooled each on its own; a block without reads has no value
    both = at_common_wait(np.array([[10.0, 3.0], [12.0, 3.0]]), np.array([[4.0, 1.0], [5.0, 1.0]]),
                          np.array([[1000, 0], [1000, 0]]))
    assert both[:, 0] == pytest.approx([10.5, 11.5]) and np.isnan(both[:, 1]).all()


def _plan(*specs: str, **kw: object) -> RunPlan:
    configs = [Config("mariadb", parse_spec(s), name=f"mariadb-{i}") for i, s in enumerate(specs)]
    return RunPlan(configs, trials=3, seed=1, **kw)


def _rows(label: str, elapsed: float, cpu: float, reads: float) -> list[Measurement]:
    rec = Recorder("r", 1, f"{label}@mem0.25", "mariadb", "x")
    for (test, step, metric), value in zip((SPLIT.elapsed, SPLIT.cpu, SPLIT.reads), (elapsed, cpu, reads)):
        rec.add(test, step, metric, value, "s")
    rec.add("power", "q01", "elapsed", 0.5, "s")
    return rec.rows


def _recorder(label: str, block: object) -> Recorder:
    return Recorder("r", 1, f"{label}@mem0.25", "mariadb", "x")


def test_a_block_from_the_disk_records_each_twins_time_at_the_common_wait_beside_its_elapsed_time() -> None:
    plan = _plan("none", "tde:aes-256-ctr", memory_ratios=(0.25,))
    manifest: dict[str, object] = {}
    wait = CommonWait(plan, SPLIT, manifest)
    assert wait.active
    wait.collect("mariadb-0", _rows("mariadb-0", 10.0, 4.0, 1000))
    wait.collect("mariadb-1", _rows("mariadb-1", 12.0, 5.0, 1000))
    rows = wait.finish(plan.blocks()[1], _recorder)
    assert [(r.config, r.test, r.step, r.metric) for r in rows] == [
        ("mariadb-0@mem0.25", "power", "total", "at_common_wait"),
        ("mariadb-1@mem0.25", "power", "total", "at_common_wait")]
    assert [r.value for r in rows] == pytest.approx([10.5, 11.5])
    assert manifest[WAITS_KEY] == {"0.25": {"1": pytest.approx(0.0065)}}  # the block's common wait, for the report
    assert wait.finish(plan.blocks()[2], _recorder) == []  # each block's figures are its own
    wait.collect("mariadb-0", _rows("mariadb-0", 10.0, 4.0, 1000))
    wait.collect("mariadb-1", _rows("mariadb-1", 12.0, 5.0, 1000))
    assert wait.finish(plan.blocks()[0], _recorder) == []  # nothing for the warm-up


@pytest.mark.parametrize("plan, why", [
    (_plan("none", "tde:aes-256-ctr"), "no memory ratio: everything cached"),
    (_plan("none", "tde:aes-256-ctr", memory_ratios=(0.25,), page_source="memory"), "misses from the page cache"),
    (_plan("none", "fs:gocryptfs", memory_ratios=(0.25,)), "one twin decrypts outside the server"),
    (_plan("none", "none", memory_ratios=(2.0,)), "the cache holds all the data"),
])
def test_no_row_where_the_figure_would_mean_nothing_or_hide_work(plan: RunPlan, why: str) -> None:
    wait = CommonWait(plan, SPLIT)
    for label in plan.labels:
        wait.collect(label, _rows(label, 10.0, 4.0, 1000))
    assert not wait.active and wait.finish(plan.blocks()[1], _recorder) == [], why
    assert not CommonWait(_plan("none", "none", memory_ratios=(0.25,)), None).active  # a workload without a split


def test_a_twin_whose_trial_lacks_a_figure_leaves_the_block_without_a_value() -> None:
    plan = _plan("none", "none", memory_ratios=(0.25,))
    wait = CommonWait(plan, SPLIT)
    wait.collect("mariadb-0", _rows("mariadb-0", 10.0, 4.0, 1000))
    wait.collect("mariadb-1", _rows("mariadb-1", 12.0, 5.0, 1000)[1:])  # no elapsed time
    assert wait.finish(plan.blocks()[1], _recorder) == []


def test_precision_watches_the_figure_only_where_it_is_recorded(tmp_path: Path) -> None:
    def watched(*specs: str, **kw: object) -> list[tuple[str, tuple[str, str, str]]]:
        plan = _plan(*specs, precision=1.0, precision_metric="headline,common-wait", **kw)
        return [(w.name, w.series) for w in watched_series(plan, make_workload(plan, RunDirectory(tmp_path)))]

    assert watched("none", "tde:aes-256-ctr", memory_ratios=(0.25,)) == [
        ("headline", ("power", "total", "elapsed")), ("common-wait", ("power", "total", "at_common_wait"))]
    with pytest.raises(UsageError) as cached:
        watched("none", "tde:aes-256-ctr")
    assert "read from the disk" in cached.value.problem and "--memory-ratio 0.25" in (cached.value.fix or "")
    with pytest.raises(UsageError) as memory:
        watched("none", "tde:aes-256-ctr", memory_ratios=(0.25,), page_source="memory")
    assert "read from the disk" in memory.value.problem
    with pytest.raises(UsageError) as oltp:
        watched("none", "tde:aes-256-ctr", memory_ratios=(0.25,), workload="tpcc")
    assert "records no time at a common wait" in oltp.value.problem and "--workload tpch" in (oltp.value.fix or "")
    with pytest.raises(UsageError) as sweep:
        watched("none", "tde:aes-256-ctr", memory_ratios=(0.25, 2.0))
    assert "--memory-ratio 2 the cache holds all the data" in sweep.value.problem
    with pytest.raises(UsageError) as fs:
        watched("none", "fs:fscrypt", memory_ratios=(0.25,))
    assert "mariadb-1" in fs.value.problem and "in the filesystem" in fs.value.problem
