"""``--schedule duet`` without real cgroups: the CPU sets and their alternation, the barrier that releases both twins'
jobs together, and whole runs on the fake engine (tests/fakes) with a stepped probe workload whose twins must meet
inside every step (a step run one after the other would never meet). Real cgroups, SQLite and MariaDB:
tests/e2e/test_duet.py."""

from __future__ import annotations

import csv
import itertools
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tdebench import workloads
from tdebench.api.plan import RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.cli.app import main
from tdebench.runner import cgroups, duet
from tdebench.runner import pairing
from tdebench.runner.pairing import CpuSwapper, TwinWorker, cpu_slots, run_pair, skew_us, slot_orders
from tests.fakes import engine as fake_engine
from tests.fakes import workload as probe

PLAIN, ENC = "fake-none", "fake-tde-aes-256-ctr"
STEPS = ("s1", "s2", "s3")


# --- the pieces -------------------------------------------------------------------------------------------------
def test_cpu_slots_split_the_cpus_in_two_equal_sets():
    assert cpu_slots({0, 1}) == ["0", "1"]
    assert cpu_slots([3, 2, 1, 0]) == ["0,1", "2,3"]
    assert cpu_slots([0, 1, 2]) == ["0", "1"]  # the odd one is nobody's
    with pytest.raises(ValueError):
        cpu_slots([0])


def test_the_cpu_sets_alternate_from_pair_to_pair_from_a_random_side_per_block():
    orders = slot_orders(seed=7, block=1, pairs=10)
    assert all(sorted(o) == [0, 1] for o in orders)
    assert all(a != b for a, b in zip(orders, orders[1:]))  # swapped every pair
    assert sum(o[0] == 0 for o in orders) == 5  # each twin has each set in half of the pairs
    assert orders == slot_orders(seed=7, block=1, pairs=10)  # reproducible from the seed
    assert {slot_orders(seed=7, block=b, pairs=1)[0] for b in range(1, 20)} == {(0, 1), (1, 0)}


def _workers(labels: list[str]) -> dict[str, TwinWorker]:
    return {label: TwinWorker(label, lambda tid: None) for label in labels}


def test_a_pair_releases_both_jobs_together():
    """Each job waits for the other to have started: run one after the other, they would never meet."""
    started = {"a": threading.Event(), "b": threading.Event()}

    def job(me: str, other: str) -> Any:
        def run() -> None:
            started[me].set()
            assert started[other].wait(10), "the other twin's job did not run at the same time"
        return run

    workers = _workers(["a", "b"])
    counter = itertools.count()
    try:
        arms = run_pair(workers, {"a": job("a", "b"), "b": job("b", "a")},
                        {"a": lambda: next(counter), "b": lambda: next(counter)},
                        {"a": lambda x, y: {"cpu_wait": float(y - x)}, "b": lambda x, y: {"cpu_wait": float(y - x)}})
    finally:
        for w in workers.values():
            w.close()
    assert all(a.error is None and a.started_ns and a.ended_ns for a in arms.values())
    assert skew_us(arms) is not None and skew_us(arms) >= 0
    assert all(a.used["cpu_wait"] > 0 for a in arms.values())  # read before and after the job


def test_a_failing_job_is_kept_and_the_other_twin_finishes():
    workers = _workers(["a", "b"])
    done = []

    def boom() -> None:
        raise RuntimeError("step failed")

    try:
        arms = run_pair(workers, {"a": boom, "b": lambda: done.append("b")},
                        {"a": lambda: 1 / 0, "b": lambda: 0}, {"a": lambda x, y: {}, "b": lambda x, y: {}})
    finally:
        for w in workers.values():
            w.close()
    assert isinstance(arms["a"].error, RuntimeError) and arms["b"].error is None and done == ["b"]
    assert arms["a"].used == {}  # its reading failed: nothing recorded, nothing raised


# --- whole runs on the fake engine ------------------------------------------------------------------------------
class SteppedOptions(probe.ProbeOptions):
    workload_name = "stepped"
    rounds: int = 0  # 0: one value per step and block (TPC-H's way); N: N rounds per step, paired per round
    meet: bool = True  # every step waits for the other twin's same step (proves they run at the same moment)
    step_s: float = 0.0  # how long each step lasts at least (long enough for the CPU sets to swap inside it)

    def why_no_steps(self) -> tuple[str, str] | None:
        return None


class SteppedProbe(probe.ProbeWorkload):
    name = "stepped"
    options_model = SteppedOptions
    meetings: dict[tuple[int, str, int], threading.Barrier] = {}
    ready_calls: list[tuple[str, int, str]] = []

    def stepped_trial(self, state: ConfigState, block: int, rec: Recorder, repeat: int) -> SteppedTrial | None:
        return _Trial(self, state, block, rec)

    def meet(self, block: int, step: str, rep: int) -> None:
        barrier = self.meetings.setdefault((block, step, rep), threading.Barrier(2))
        barrier.wait(20)


class _Trial(SteppedTrial):
    steps = STEPS

    def __init__(self, owner: SteppedProbe, state: ConfigState, block: int, rec: Recorder) -> None:
        self.owner, self.state, self.block, self.rec = owner, state, block, rec
        self.rounds = owner.options.rounds or None
        self.values: dict[str, list[float]] = {}

    def ready(self, step: str) -> None:
        self.owner.ready_calls.append((self.state.label, self.block, step))

    def run_step(self, step: str, repetition: int) -> None:
        if self.owner._wants("fail", self.state, self.block) and step == "s2":
            raise RuntimeError(f"probe: {self.state.label} fails {step}")
        if self.owner.options.meet:
            self.owner.meet(self.block, step, repetition)
        _, seconds = self.owner._query(self.state)
        time.sleep(self.owner.options.step_s)
        if self.rounds:
            self.rec.add("stepped", step, "elapsed", seconds, "s", round=repetition + 1)
        self.values.setdefault(step, []).append(seconds)

    def finish(self) -> TrialResult:
        if not self.rounds:
            for step, values in self.values.items():
                self.rec.add("stepped", step, "elapsed", sum(values) / len(values), "s")
            self.rec.add("stepped", "total", "elapsed", sum(sum(v) / len(v) for v in self.values.values()), "s")
        return TrialResult()


class FakeGroup:
    """Records what the schedule does with a twin's group; its readings grow by a fixed step."""

    made: list["FakeGroup"] = []

    def __init__(self, name: str, hier: Any = None) -> None:
        self.name, self.hier = name, hier or cgroups.Hierarchies("1", {})
        self.cpus: list[str] = []
        self.threads: list[int] = []
        self.processes_added: list[int] = []
        self.released = False
        self._ticks = itertools.count()
        FakeGroup.made.append(self)

    @property
    def paths(self) -> list[Path]:
        return [Path("/nonexistent-cgroup") / self.name]

    def create(self) -> None:
        pass

    def set_cpus(self, cpus: str) -> None:
        self.cpus.append(cpus)

    def add_process(self, pid: int) -> bool:
        self.processes_added.append(pid)
        return True

    def add_thread(self, tid: int) -> bool:
        self.threads.append(tid)
        return True

    def adopt(self, pids: list[int]) -> None:
        self.processes_added.extend(pids)

    def processes(self) -> list[int]:
        return []

    def read(self, with_tasks: bool = True) -> cgroups.GroupReading:
        tick = next(self._ticks)
        return cgroups.GroupReading(time.monotonic_ns(), cpu_ns=tick * 1_000_000, throttled_ns=0,
                                    io={"254:0": [tick * 4096, 0, tick, 0]}, tasks={1: (tick * 500_000, -1)})

    def release(self, wait: float = 5.0) -> list[str]:
        self.released = True
        return []


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    """The fake engine, the stepped probe workload, and cgroups that only record what is done with them."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(cgroups, "TwinGroup", FakeGroup)
    monkeypatch.setattr(cgroups, "unavailable", lambda: "")
    monkeypatch.setattr(cgroups, "locate", lambda: cgroups.Hierarchies("1", {}))
    monkeypatch.setattr(cgroups, "device_of", lambda path: None)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    # the fake's database lives in this process's memory: its statements cannot move to host processes
    monkeypatch.setattr(duet.DuetSchedule, "_host", lambda self, state: None)
    FakeGroup.made = []
    SteppedProbe.meetings, SteppedProbe.ready_calls = {}, []
    workloads.register("stepped", SteppedProbe, SteppedOptions)
    try:
        with fake_engine.registered():
            yield
    finally:
        workloads.unregister("stepped")


def _run(capfd, tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    out = tmp_path / "run"
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["run", "--engine", "fake", "--workload", "stepped", "--schedule", "duet", "--out", str(out),
              "--work-dir", str(tmp_path / "work"), "--data-dir", str(tmp_path / "data"), "--seed", "7",
              "--no-report", "--warmup", "0", "--trials", "2", *args])
    return int(info.value.code or 0), capfd.readouterr().err, out


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "measurements.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_duet_run_pairs_every_step_and_swaps_the_cpu_sets(fakes, capfd, tmp_path):
    code, err, out = _run(capfd, tmp_path, "--workload-option", "rounds=2")
    assert code == 0, err
    entry = json.loads((out / "manifest.json").read_text())["schedule"]
    assert entry["name"] == "duet" and entry["cpu_slots"] == ["0,1", "2,3"]
    for block in ("1", "2"):
        pairs = entry["pairs"][block]
        names = [p[0] for p in pairs]
        assert names == ["begin", *[x for s in STEPS for x in (f"ready:{s}",) * 2 + (f"{s}#1", f"{s}#2")], "finish"]
        assert {p[1] for p in pairs} == {"0,1|2,3", "2,3|0,1"}
        assert all(a[1] != b[1] for a, b in zip(pairs, pairs[1:]))  # swapped from pair to pair
        assert all((p[2] is None) == p[0].startswith("ready") for p in pairs)  # skew of both twins' releases
    assert entry["skew_us"]["pairs"] == 2 * len(STEPS) * 2
    assert len(SteppedProbe.meetings) == 2 * len(STEPS) * 2  # every step of both twins met the other's
    first, second = FakeGroup.made
    assert [len(first.cpus), len(second.cpus)] == [2 * 14, 2 * 14]
    assert all({a, b} == {"0,1", "2,3"} for a, b in zip(first.cpus, second.cpus))  # never the same set at once
    assert len(first.threads) == 2 and len(second.threads) == 2  # one client thread per twin and block
    assert first.released and second.released
    assert sorted(SteppedProbe.ready_calls) == sorted((c, b, s) for c in (PLAIN, ENC) for b in (1, 2)
                                                      for s in STEPS)
    rows = _rows(out)
    values = {(r["config"], r["block"], r["step"], r["round"]) for r in rows if r["test"] == "stepped"}
    assert values == {(c, b, s, r) for c in (PLAIN, ENC) for b in ("1", "2") for s in STEPS for r in ("1", "2")}
    waits = [r for r in rows if r["test"] == "duet" and r["metric"] == "cpu_wait"]
    assert len(waits) == 2 * 2 * len(STEPS) * 2 and all(float(r["value"]) == 0.0005 for r in waits)
    assert {r["unit"] for r in rows if r["test"] == "duet" and r["metric"] == "read_bytes"} == {"bytes"}


def test_the_cpu_sets_swap_inside_a_long_pair(fakes, capfd, tmp_path, monkeypatch):
    """A step longer than the swap period runs on both CPU sets in turn, never both twins on one set at once."""
    monkeypatch.setattr(pairing, "SWAP_SECONDS", 0.02)
    code, err, out = _run(capfd, tmp_path, "--workload-option", "step_s=0.15", "--trials", "1")
    assert code == 0, err
    entry = json.loads((out / "manifest.json").read_text())["schedule"]
    assert entry["swap_seconds"] == 0.02
    measured = [p for p in entry["pairs"]["1"] if p[0] in STEPS]
    assert len(measured) == len(STEPS) and all(p[3] >= 2 for p in measured)  # swapped inside every step
    assert all(p[3] == 0 for p in entry["pairs"]["1"] if p[0].startswith("ready"))  # one twin alone: no swap
    assert entry["swaps"]["count"] == sum(p[3] for p in entry["pairs"]["1"])
    first, second = FakeGroup.made
    assert len(first.cpus) > 2 * 14 and len(first.cpus) == len(second.cpus)


def test_the_swapper_alternates_the_sets_and_the_twin_written_first():
    writes: list[tuple[int, str]] = []
    setters = [lambda cpus, t=t: writes.append((t, cpus)) for t in (0, 1)]
    with CpuSwapper(setters, ["0", "1"], (1, 0), period=0.01) as swapper:
        time.sleep(0.12)
    assert swapper.count >= 3 and len(writes) == 2 * swapper.count and swapper.failed is None
    swaps = [writes[i:i + 2] for i in range(0, len(writes), 2)]
    for k, swap in enumerate(swaps, start=1):
        assert dict(swap) == {0: "10"[k % 2], 1: "01"[k % 2]}  # rotated by k from the sets the pair began with
        assert swap[0][0] == (1 if k % 2 else 0)  # the twin written first alternates
    assert len(swapper.timings) == swapper.count


def test_a_swap_that_fails_stops_the_swapping_and_says_why():
    def refuse(cpus: str) -> None:
        raise OSError(28, "No space left on device")

    with CpuSwapper([refuse, refuse], ["0", "1"], (0, 1), period=0.01) as swapper:
        time.sleep(0.05)
    assert swapper.count == 0 and "No space left" in (swapper.failed or "")


def test_one_value_per_step_and_block_without_rounds(fakes, capfd, tmp_path):
    """TPC-H's way: one value per step and block (and a total), the waits likewise."""
    code, err, out = _run(capfd, tmp_path)
    assert code == 0, err
    pairs = json.loads((out / "manifest.json").read_text())["schedule"]["pairs"]["1"]
    assert [p[0] for p in pairs if not p[0].startswith(("ready", "begin", "finish"))] == list(STEPS)
    waits = [r for r in _rows(out) if r["test"] == "duet" and r["metric"] == "cgroup_cpu"]
    assert {(r["step"], r["round"]) for r in waits} == {(s, "") for s in (*STEPS, "total")}
    total = [float(r["value"]) for r in waits if r["step"] == "total"]
    assert total and all(abs(t - 3 * 0.001) < 1e-12 for t in total)  # the steps' sum


def test_a_twin_that_fails_leaves_the_block_and_the_other_goes_on_alone(fakes, capfd, tmp_path):
    code, err, out = _run(capfd, tmp_path, "--workload-option", f"fail={ENC}@1", "--workload-option", "meet=false")
    assert code == 1 and "fails s2" in err
    pairs = json.loads((out / "manifest.json").read_text())["schedule"]["pairs"]
    block1 = {p[0]: p[2] for p in pairs["1"]}
    assert block1["s1"] is not None and block1["s2"] is not None  # both started s2; one failed in it
    assert block1["s3"] is None and block1["finish"] is None  # then the plain twin alone
    assert all(p[2] is not None for p in pairs["2"] if not p[0].startswith("ready"))  # the next block pairs again
    trials = {(r["block"], r["config"], r["status"]) for r in _rows(out) if r["test"] == "trial"}
    assert ("1", ENC, "failed") in trials and ("1", PLAIN, "ok") in trials and ("2", ENC, "ok") in trials


def _plan(**kw: Any) -> RunPlan:
    from tdebench.api.engine import Config
    from tdebench.encryption import parse_spec

    configs = kw.pop("configs", [Config("sqlite", parse_spec("none")), Config("sqlite", parse_spec("sqlcipher:aes-256-cbc"))])
    return RunPlan(configs=configs, schedule="duet", **kw)


def test_check_plan_refuses_what_the_duet_cannot_serve(monkeypatch):
    from tdebench.api.engine import Config
    from tdebench.encryption import parse_spec
    from tdebench.errors import EnvironmentProblem, UsageError

    monkeypatch.setattr(cgroups, "unavailable", lambda: "")
    duet.check_plan(_plan())
    cases = [
        (_plan(configs=[Config("sqlite", parse_spec("none"))]), "exactly two configs"),
        (_plan(pin=True), "--pin"),
        (_plan(workload="load"), "no steps"),
        (_plan(workload_options={"tests": ["throughput"]}), "throughput test runs whole"),
        (_plan(configs=[Config("duckdb", parse_spec("none")), Config("duckdb", parse_spec("none"), name="d2")]),
         "one process only"),
        (_plan(configs=[Config("external", parse_spec("none"), name="a"),
                        Config("external", parse_spec("none"), name="b")]), "does not run"),
    ]
    for plan, fragment in cases:
        with pytest.raises(UsageError, match=fragment):
            duet.check_plan(plan)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    with pytest.raises(UsageError, match="at least 2 CPUs"):
        duet.check_plan(_plan())
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(cgroups, "unavailable", lambda: "only root can create cgroups")
    with pytest.raises(EnvironmentProblem, match="only root"):
        duet.check_plan(_plan())


def test_pin_is_refused_by_the_duet_and_taken_by_turns(monkeypatch):
    from tdebench.api.engine import Config
    from tdebench.encryption import parse_spec
    from tdebench.errors import UsageError

    monkeypatch.setattr(cgroups, "unavailable", lambda: "")
    monkeypatch.setattr(duet, "freezer_base", lambda: Path("/sys/fs/cgroup/freezer"))
    twins = [Config("mariadb", parse_spec("none")), Config("mariadb", parse_spec("none"), name="m2")]
    with pytest.raises(UsageError, match="or use --schedule turns"):
        duet.check_plan(_plan(configs=twins, pin=True))
    turns = RunPlan(configs=twins, schedule="turns", pin=True)  # one twin runs at a time: both on the server CPUs
    duet.check_plan(turns)


def test_the_methods_text_says_how_often_the_cpu_sets_swapped():
    from tdebench.report.duet_view import duet_text

    entry = {"cpu_slots": ["0", "1"], "swap_seconds": 0.2, "swaps": {"count": 40, "median_write_us": 476.3}}
    text = duet_text({"schedule": entry})
    assert "swapped every 0.2 s while a pair ran (40 swaps, each written in a median 476.3 µs)" in text
    older = duet_text({"schedule": {"cpu_slots": ["0", "1"]}})  # a run from before the swaps
    assert older.startswith("Duet schedule: ") and "stayed put inside a pair" in older


def test_a_group_that_read_nothing_read_0_bytes_and_one_without_counters_reports_none(tmp_path):
    """v1 lists a device only once the group has used it: an empty list is 0 bytes (a cached step), not a missing
    figure; counters that cannot be read give no I/O figures at all."""
    (tmp_path / "blkio.throttle.io_service_bytes").write_text("Total 0\n")
    (tmp_path / "blkio.throttle.io_serviced").write_text("Total 0\n")
    quiet = cgroups.GroupReading(0, io=cgroups._blkio(tmp_path))
    assert quiet.io == {} and cgroups._blkio(tmp_path / "gone") is None and cgroups._iostat(tmp_path / "x") is None
    used = cgroups.used_between(quiet, quiet, {"254:0"})
    assert (used["read_bytes"], used["write_bytes"], used["read_ios"]) == (0.0, 0.0, 0.0)
    (tmp_path / "blkio.throttle.io_service_bytes").write_text("254:0 Read 8192\n254:0 Write 0\nTotal 8192\n")
    (tmp_path / "blkio.throttle.io_serviced").write_text("254:0 Read 2\n254:0 Write 0\nTotal 2\n")
    after = cgroups.GroupReading(1, io=cgroups._blkio(tmp_path))
    assert cgroups.used_between(quiet, after, {"254:0"})["read_bytes"] == 8192.0
    assert "read_bytes" not in cgroups.used_between(cgroups.GroupReading(0), after, {"254:0"})


def test_the_reads_of_a_twins_device_leave_out_a_device_whose_number_ends_the_same(tmp_path):
    """Devices are matched whole: "54:0" is not part of "254:0", and one device's name alone is refused."""
    (tmp_path / "blkio.throttle.io_service_bytes").write_text(
        "254:0 Read 8192\n254:0 Write 0\n54:0 Read 4096\n54:0 Write 0\nTotal 12288\n")
    (tmp_path / "blkio.throttle.io_serviced").write_text("254:0 Read 2\n254:0 Write 0\n54:0 Read 1\n54:0 Write 0\n")
    after = cgroups.GroupReading(1, io=cgroups._blkio(tmp_path))
    before = cgroups.GroupReading(0, io={})
    assert cgroups.used_between(before, after, {"254:0"})["read_bytes"] == 8192.0
    assert cgroups.used_between(before, after, {"54:0"})["read_ios"] == 1.0
    assert cgroups.used_between(before, after, None)["read_bytes"] == 12288.0
    with pytest.raises(TypeError):
        cgroups.used_between(before, after, "254:0")  # type: ignore[arg-type]
