"""Precision on a user's own workload, on the fake engine (tests/fakes): the sql statements interleaved visit by
visit, the statement mix on N connections in slices, the replay segment by segment, and a --precision rule that
watches several headlines and stops when every one meets its target."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from statistics import fmean
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import trim_mean

from tdebench.api.engine import Config
from tdebench.api.plan import RunPlan
from tdebench.api.trial import Recorder
from tdebench.cli.app import main
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.results.rundir import RunDirectory
from tdebench.report.build import build_report
from tdebench.runner.precision import BlockSequence, Watched, progress_line, steps_to_skip, watched_series
from tdebench.stats.sequential import StoppingRule
from tdebench.workloads import make_workload
from tdebench.workloads.sql.stepped import Visits, trimmed_geometric_mean
from tdebench.workloads.sql.steps import record_totals
from tests.fakes import engine as fake_engine
from tests.sqlworkload import make_workload_dir

ENC = "fake-tde-aes-256-ctr"
LOG = "".join(  # three sessions over three seconds of log time: three segments of 1 s
    f"2024-11-26 23:45:{1 + i // 4:02d}.{(i % 4) * 250:03d} UTC [{1234 + i % 3}] LOG:  duration: 0.100 ms  "
    + ("statement: INSERT INTO orders (id, customer_id, placed, amount, paid) VALUES "
       f"({500 + i}, 1, '2024-03-01', 2.5, true)\n" if i % 5 == 2 else
       f"statement: SELECT COUNT(*) FROM orders WHERE customer_id = {i % 3 + 1}\n")
    for i in range(12))


@pytest.fixture(autouse=True)
def _fake(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with fake_engine.registered():
        yield


def run(capfd, tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    out = tmp_path / "run"
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["run", "--engine", "fake", "--out", str(out), "--work-dir", str(tmp_path / "work"), "--data-dir",
              str(tmp_path / "data"), "--no-report", "--seed", "5", *args])
    return int(info.value.code or 0), capfd.readouterr().err, out


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "measurements.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def values(out: Path, config: str, block: str, test: str = "sql", metric: str = "elapsed") -> dict[str, float]:
    return {r["step"]: float(r["value"]) for r in rows(out) if r["test"] == test and r["config"] == config
            and r["block"] == block and r["metric"] == metric and not r["round"]}


def test_statements_are_visited_in_turn_with_the_same_runs_on_every_config(capfd, tmp_path):
    shop = make_workload_dir(tmp_path / "shop", toml="[weights]\nby_city = 3\nadd_order = 0.5\n")
    code, err, out = run(capfd, tmp_path, "--workload", "sql", "--workload-dir", str(shop), "--trials", "2",
                         "--duration", "60ms", "--slice", "20ms")
    assert code == 0, err
    schedule = json.loads((out / "manifest.json").read_text())["schedule"]
    assert schedule["effective"] == "query" and schedule["rounds_per_step"] == 3
    runs, visits = schedule["runs_per_visit"], schedule["visits_per_block"]
    assert set(runs) == {"by_city", "notes", "add_order"} and all(n >= 1 for n in runs.values())
    assert len(schedule["orders"]["1"]) == 3 * 3  # one entry per statement and round
    for block in ("1", "2"):
        counts = {c: values(out, c, block, metric="runs") for c in ("fake-none", ENC)}
        assert counts["fake-none"] == counts[ENC] == {s: runs[s] * visits[s] for s in runs}  # equal work
        mine = values(out, ENC, block)
        assert mine["reads"] == pytest.approx(3 * mine["by_city"] + mine["notes"])
        assert mine["writes"] == pytest.approx(0.5 * mine["add_order"])
        assert mine["total"] == pytest.approx(mine["reads"] + mine["writes"])
        for step in runs:  # a statement's time: the trimmed geometric mean of its visits; every run's mean beside it
            seen = [float(r["value"]) for r in rows(out) if r["config"] == ENC and r["block"] == block
                    and r["step"] == step and r["metric"] == "visit_elapsed"]
            assert len(seen) == visits[step] and mine[step] == pytest.approx(math.exp(trim_mean(np.log(seen), 0.2)))
            assert values(out, ENC, block, metric="mean_elapsed")[step] == pytest.approx(np.mean(seen))
        means = values(out, ENC, block, metric="mean_elapsed")  # their totals too
        assert means["writes"] == pytest.approx(0.5 * means["add_order"]) and means["total"] > means["writes"]


def test_the_mix_runs_on_n_connections_in_slices(capfd, tmp_path):
    shop = make_workload_dir(tmp_path / "shop")
    code, err, out = run(capfd, tmp_path, "--workload", "sql", "--workload-dir", str(shop), "--trials", "1",
                         "--warmup", "0", "--vus", "1,2", "--duration", "1s", "--slice", "500ms", "--rampup", "100ms")
    assert code == 0, err
    mine = values(out, ENC, "1")
    for vus in (1, 2):
        assert {f"vu{vus}.{s}" for s in ("reads", "writes", "total", "by_city", "notes", "add_order")} <= set(mine)
        assert mine[f"vu{vus}.reads"] == pytest.approx(mine[f"vu{vus}.by_city"] + mine[f"vu{vus}.notes"])
        rates = [r for r in rows(out) if r["config"] == ENC and r["step"] == f"vu{vus}"
                 and r["metric"] == "statements_per_s"]
        assert [r["round"] for r in rates] == ["1", "2"] and all(float(r["value"]) > 0 for r in rates)
    workload = make_workload(RunPlan([Config("fake", parse_spec("none"))], workload="sql",
                                     workload_options={"dir": str(shop), "vus": "1,2"}), RunDirectory(out))
    assert [h.step for h in workload.headlines()][:2] == ["vu2.reads", "vu2.writes"]


def test_the_replay_runs_segment_by_segment(capfd, tmp_path):
    shop = make_workload_dir(tmp_path / "shop")
    log = tmp_path / "shop.log"
    log.write_text(LOG)
    code, err, out = run(capfd, tmp_path, "--workload", "replay", "--workload-dir", str(shop), "--log", str(log),
                         "--workload-option", "speed=max", "--trials", "2", "--warmup", "0")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schedule"]["segments"] == 3 and len(manifest["schedule"]["orders"]["1"]) == 3
    for config in ("fake-none", ENC):
        assert values(out, config, "1", "replay", "statements")["total"] == 12
        assert values(out, config, "2", "replay", "failed")["total"] == 0  # the INSERTs were undone in between
    names = [h.name for h in make_workload(RunPlan([Config("fake", parse_spec("none"))], workload="replay",
                                                   workload_options={"dir": str(shop), "log": str(log)}),
                                           RunDirectory(out)).headlines()]
    assert names[0] == "wall" and all(n.startswith("d0") for n in names[1:]) and len(names) == 3


def _plan(shop: Path, metric: str = "headline", precision: float = 2.0) -> RunPlan:
    return RunPlan([Config("fake", parse_spec("none")), Config("fake", parse_spec("none"), name="fake-none-2")],
                   workload="sql", workload_options={"dir": str(shop)}, precision=precision,
                   precision_metric=metric, trials=3, schedule="query")


def test_precision_watches_every_headline_or_those_named(tmp_path):
    shop = make_workload_dir(tmp_path / "shop")
    everything = watched_series(_plan(shop), make_workload(_plan(shop), RunDirectory(tmp_path)))
    assert [w.name for w in everything] == ["reads", "writes", "by_city", "notes", "add_order"]
    assert {w.rule.target_pp for w in everything} == {2.0}
    plan = _plan(shop, "reads,writes=5%")
    chosen = watched_series(plan, make_workload(plan, RunDirectory(tmp_path)))
    assert [(w.name, w.series, w.rule.target_pp) for w in chosen] == [
        ("reads", ("sql", "reads", "elapsed"), 2.0), ("writes", ("sql", "writes", "elapsed"), 5.0)]
    plan = _plan(shop, "headline,notes=10%")
    assert {w.name: w.rule.target_pp for w in watched_series(plan, make_workload(plan, RunDirectory(tmp_path)))}[
        "notes"] == 10.0
    plan = _plan(shop, "reads,q9")
    with pytest.raises(UsageError, match="has no figure 'q9' to watch .it has: reads, writes, by_city"):
        watched_series(plan, make_workload(plan, RunDirectory(tmp_path)))
    with pytest.raises(UsageError, match="is not a headline name"):
        _plan(shop, "reads=lots")


def _measured(rundir: RunDirectory, block: int, noisy: float, rng: np.random.Generator) -> None:
    """One block of an A/A sql run: reads nearly equal in both twins, writes off by ``noisy`` (log sd)."""
    for config in ("fake-none", "fake-none-2"):
        rec = Recorder("r", block, config, "fake", "none", workload="sql")
        other = config != "fake-none"
        rec.add("sql", "reads", "elapsed", 1.0 * math.exp(other * rng.normal(0, 0.001)), "s")
        rec.add("sql", "writes", "elapsed", 2.0 * math.exp(other * rng.normal(0, noisy)), "s")
        rec.add("trial", "trial", "completed", 1, "flag")
        rundir.append(rec.rows)


@pytest.mark.parametrize("noisy, stopped_by", [(0.001, "target met"), (0.2, "--max-trials")])
def test_the_rule_stops_when_every_watched_headline_is_met(tmp_path, noisy, stopped_by):
    shop = make_workload_dir(tmp_path / "shop")
    plan = RunPlan([Config("fake", parse_spec("none")), Config("fake", parse_spec("none"), name="fake-none-2")],
                   workload="sql", workload_options={"dir": str(shop)}, precision=2.0,
                   precision_metric="reads,writes", trials=3, max_trials=6, schedule="query", seed=1)
    rundir = RunDirectory.create(tmp_path / "run")
    manifest: dict = {}
    messages: list[str] = []

    class Listener:
        def message(self, text: str) -> None:
            messages.append(text)

    sequence = BlockSequence(plan, rundir, watched_series(plan, make_workload(plan, rundir)), manifest,
                             Listener())  # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    done = [b.number for b in sequence.blocks() if b.warmup or _measured(rundir, b.number, noisy, rng) is None]
    entry = manifest["precision"]
    assert entry["stopped_by"] == stopped_by and [w["name"] for w in entry["watched"]] == ["reads", "writes"]
    reads = entry["headlines"]["reads"]["decisions"]["fake-none-2"]
    writes = entry["headlines"]["writes"]["decisions"]["fake-none-2"]
    assert reads["met"] and writes["met"] == (stopped_by == "target met")
    assert done[-1] == (3 if stopped_by == "target met" else 6)
    assert entry["history"][-1]["headlines"]["writes"]["fake-none-2"]["n"] == done[-1]
    progress = [m for m in messages if m.startswith("precision fake-none-2: ")]
    assert len(progress) == done[-1] and "reads —" in progress[0] and "writes ±" in progress[-1]
    assert entry["outcome"]["fake-none-2"].startswith("reads: Precision target ±2% met")


@pytest.mark.parametrize("max_time, said", [(9 * 60.0, "its pilot"), (30 * 60.0, "them"), (3600.0, None)])
def test_the_run_says_when_its_time_limit_ends_it_before_the_rule_can(tmp_path, monkeypatch, max_time, said):
    """At 100 s a block a pilot of 5 blocks cannot end within 9 minutes, and blocks that vary by 20% cannot reach
    ±2% within 30: each said once, with a --max-time that would fit them; an hour fits the pilot and says nothing
    of it."""
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr("tdebench.runner.precision.time", SimpleNamespace(monotonic=lambda: clock.now))
    shop = make_workload_dir(tmp_path / "shop")
    plan = RunPlan([Config("fake", parse_spec("none")), Config("fake", parse_spec("none"), name="fake-none-2")],
                   workload="sql", workload_options={"dir": str(shop)}, precision=2.0, precision_metric="writes",
                   trials=5, max_time=max_time, schedule="query", seed=1)
    rundir = RunDirectory.create(tmp_path / "run")
    messages: list[str] = []
    listener = SimpleNamespace(message=messages.append)
    sequence = BlockSequence(plan, rundir, watched_series(plan, make_workload(plan, rundir)), {}, listener,
                             started=0.0)  # type: ignore[arg-type]
    rng = np.random.default_rng(5)
    for block in sequence.blocks():
        clock.now += 100.0
        if not block.warmup:
            _measured(rundir, block.number, 0.2, rng)
    pace = [m for m in messages if m.startswith("precision: at 100 s a block")]
    if said is None:
        assert not [m for m in pace if "pilot" in m]
        return
    mine = [m for m in pace if m.endswith(said)]
    assert len(mine) == 1
    blocks = 5 if said == "its pilot" else int(mine[0].split("the ")[1].split(" blocks")[0])
    minutes = int(mine[0].split("--max-time ")[1].split("m ")[0])
    assert minutes * 60 > max_time and minutes * 60 >= (blocks + 1) * 100  # the warm-up's 100 s, and one more block


def test_progress_names_each_headline_and_the_slowest():
    rule = StoppingRule(2.0, min_n=3)
    rng = np.random.default_rng(4)
    line = progress_line({"reads": rule.check_log_ratios(rng.normal(0, 0.001, 5)),
                          "writes": rule.check_log_ratios(rng.normal(0, 0.05, 5))})
    assert line.startswith("n = 5: reads ±0.") and "(met)" in line and "writes ±" in line
    assert "1 of 2 not met, about" in line and line.endswith("blocks in all (writes)")


def test_a_write_is_planned_by_its_timed_time_not_by_its_untimed_undo():
    plan = Visits(visit=0.1, duration=0.5, rounds=5)
    # a 12-ms write whose undo takes 90 ms: after one execution 0.1 s have passed, 12 ms of them measured
    assert not plan.full(timed=0.012, wall=0.102)
    assert plan.full(timed=0.108, wall=0.918)  # nine executions: a visit's length measured
    assert plan.full(timed=0.012, wall=1.0)  # an undo a hundred times the write: the visit still ends
    plan.record("new_orders", "plain", block=0, runs=9, seconds=0.108)
    assert plan.as_json() == {"runs_per_visit": {"new_orders": 9}, "visits_per_block": {"new_orders": 5}}


def test_the_slowest_config_sets_the_runs_per_visit():
    plan = Visits(visit=0.1, duration=0.5, rounds=5)
    assert not plan.known("q1", "sqlite", 0)
    plan.record("q1", "sqlite", block=0, runs=100, seconds=0.1)  # 1 ms a run: the first to visit
    assert plan.known("q1", "sqlite", 0) and not plan.known("q1", "postgres", 0)  # postgres makes its own visit
    plan.record("q1", "postgres", block=0, runs=10, seconds=0.1)  # 10 ms a run
    assert plan.runs["q1"] == 10 and plan.visits["q1"] == 5  # postgres's visit lasts 100 ms, not a second
    plan.record("q1", "mariadb", block=0, runs=10, seconds=0.2)  # capped at 10 runs, 20 ms each
    assert plan.runs["q1"] == 10 and plan.visits["q1"] == 2  # 200-ms visits: two fit in 500 ms
    assert plan.known("q1", "duckdb", 1)  # after the first block every config runs the plan


def _watch(name: str, steps: tuple[str, ...] | None) -> Watched:
    return Watched(name, ("sql", name, "elapsed"), name, StoppingRule(2.0), steps)


def test_a_step_is_left_out_only_when_every_figure_that_needs_it_is_met():
    reads, writes = _watch("reads", ("q1", "q2")), _watch("writes", ("w1",))
    q1, total = _watch("q1", ("q1",)), _watch("total", ("q1", "q2", "w1"))
    assert steps_to_skip([reads, writes], {"reads"}) == {"q1", "q2"}
    assert steps_to_skip([reads, writes, q1], {"reads"}) == {"q2"}  # q1's own figure is still open
    assert steps_to_skip([reads, writes, total], {"reads", "writes"}) == set()  # the total needs every step
    assert steps_to_skip([reads, writes], {"reads", "writes"}) == set()  # all met: the run stops instead
    assert steps_to_skip([reads, _watch("cpu", None)], {"reads"}) == set()  # cpu may need every step


def test_a_left_out_step_records_no_headline_that_needs_it():
    rec = Recorder("r", 4, "c", "fake", "none", workload="sql")
    steps = [SimpleNamespace(name="q1", kind="query", weight=2.0), SimpleNamespace(name="w1", kind="write", weight=1.0)]
    record_totals(rec, "sql", "", steps, {"w1": 0.5}, set(), skipped=frozenset({"q1"}))
    assert {r.step: r.value for r in rec.rows} == {"writes": 0.5}  # no reads and no total: not failed either
    rec = Recorder("r", 4, "c", "fake", "none", workload="sql")
    record_totals(rec, "sql", "", steps, {"w1": 0.5}, set())  # missing without being left out: failed
    assert {r.step: r.status for r in rec.rows}["reads"] == "failed"


def test_once_the_reads_are_met_the_blocks_run_the_writes_alone(capfd, tmp_path):
    LAST = 16  # room for a noisy machine: 20-ms slices of a loaded CPU can take more blocks to meet ±100%
    shop = make_workload_dir(tmp_path / "shop")
    code, err, out = run(capfd, tmp_path, "--workload", "sql", "--workload-dir", str(shop), "--trials", "3",
                         "--max-trials", str(LAST), "--duration", "60ms", "--slice", "20ms", "--precision", "2%",
                         "--precision-metric", "reads=100%,writes=0.0001%")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["precision"]["headlines"]["reads"]["decisions"][ENC]["met"]
    history = manifest["precision"]["history"]
    met = next(h["block"] for h in history if h.get("skip_steps"))  # the first block after which reads were met
    assert met < LAST and all(h.get("skip_steps") == ["by_city", "notes"] for h in history if h["block"] >= met)
    assert manifest["schedule"]["skipped"] == {str(b): ["by_city", "notes"] for b in range(met + 1, LAST + 1)}
    assert "the next blocks leave out what no open figure needs (2 steps: by_city, notes)" in " ".join(err.split())
    for config in ("fake-none", ENC):
        for block in range(1, met + 1):
            assert {"reads", "writes", "total", "by_city", "notes", "add_order"} <= set(values(out, config, str(block)))
        for block in range(met + 1, LAST + 1):
            assert set(values(out, config, str(block))) == {"writes", "add_order"}
    assert not [r for r in rows(out) if r["test"] == "sql" and r["status"] == "failed"]
    build_report(out)
    summary = (out / "report" / "summary.md").read_text()
    assert f"- **fake** (precision target): {ENC} writes: Precision target ±0.0001% NOT met" in summary
    assert f"(sql reads): {ENC} writes: Precision" not in summary  # not under the reads' label


@pytest.mark.parametrize("values", [[1.0, 2.0, 4.0], [2.0] * 8 + [90.0, 0.001], list(np.linspace(1, 3, 25)) + [40.0]])
def test_a_blocks_statement_time_leaves_the_fastest_and_slowest_fifth_of_its_visits_out(values):
    logs = sorted(math.log(v) for v in values)
    cut = int(0.2 * len(logs))  # a fifth at each end, rounded down: nothing left out of 3 values
    assert trimmed_geometric_mean(values) == pytest.approx(math.exp(fmean(logs[cut:len(logs) - cut])))
    assert trimmed_geometric_mean([2.0] * 8 + [90.0, 90.0]) == pytest.approx(2.0)  # two stalls of ten: left out
