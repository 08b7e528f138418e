"""benchmarks/block_ratios.py and visit_noise.py's headline table on a synthetic run: the figures they print are the
ones computed by hand from its measurements."""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.benchscripts import load

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ["run_id", "block", "trial", "config", "engine", "encryption", "workload", "test", "stream", "step", "metric",
          "value", "unit", "started_at", "status", "round"]


def _run(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    configs = [{"label": "a", "encryption": "none"}, {"label": "b", "encryption": "tde:aes-256-ctr"}]
    (tmp_path / "manifest.json").write_text(json.dumps({"plan": {"configs": configs}}))
    with open(tmp_path / "measurements.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({f: row.get(f, "") for f in FIELDS})
    return tmp_path


def _row(config: str, block: int, step: str, value: float, test: str = "power", status: str = "ok") -> dict:
    return {"config": config, "block": block, "test": test, "step": step, "metric": "elapsed", "value": value,
            "status": status, "round": ""}


def test_block_ratios_prints_each_steps_mean_sd_lag1_and_count(tmp_path, capsys, monkeypatch):
    b_times = {1: 1.1, 2: 0.9, 3: 1.2}
    rows = [_row("a", b, "q01", 1.0) for b in b_times] + [_row("b", b, "q01", v) for b, v in b_times.items()]
    rows += [_row("a", 0, "q01", 9.0), _row("b", 0, "q01", 1.0), _row("b", 4, "q01", 5.0, status="error")]
    monkeypatch.setattr(sys, "argv", ["block_ratios.py", str(_run(tmp_path, rows))])
    load("block_ratios").main()
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("q01"))
    logs = [100 * math.log(v) for v in b_times.values()]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    dev = [x - mean for x in logs]
    r1 = (dev[1] * dev[0] + dev[2] * dev[1]) / sum(x * x for x in dev)
    assert line.split() == ["q01", "b", "3", f"{mean:+.2f}", f"{sd:.2f}", f"{r1:+.2f}", "1", "of", "3"]


def test_block_effect_splits_a_rounds_variance_into_within_and_between_blocks():
    import numpy as np

    effect = load("block_ratios").block_effect
    shared = effect([np.array([1.0, 3.0]), np.array([11.0, 13.0]), np.array([21.0, 23.0])])
    assert shared["within_sd"] == pytest.approx(math.sqrt(2.0))  # each block's two rounds: variance 2
    # block means 2, 12, 22: variance 100; minus what the rounds' own noise puts there (2 / 2 rounds)
    assert shared["between_sd"] == pytest.approx(math.sqrt((2 * 100 - 2) / 2))
    assert shared["p"] < 0.01 and shared["design_effect"] == pytest.approx(1 + 2 * 99 / 2)
    none = effect([np.array([0.0, 4.0]), np.array([1.0, 3.0]), np.array([4.0, 0.0])])
    assert none["between_sd"] == 0.0 and none["p"] > 0.5  # the block means are all 2: nothing of their own
    assert effect([np.array([1.0, 2.0])]) is None  # one block: nothing to compare


def test_block_ratios_prints_the_block_effect_of_a_step_in_rounds(tmp_path, capsys, monkeypatch):
    rows = [{**_row(c, b, "vu2", v * (1 + 0.1 * b if c == "b" else 1), test="tpcc"), "metric": "tpm", "round": r}
            for c in ("a", "b") for b in (1, 2, 3) for r, v in ((1, 100.0), (2, 102.0))]
    monkeypatch.setattr(sys, "argv", ["block_ratios.py", str(_run(tmp_path, rows)), "--test", "tpcc", "--metric",
                                      "tpm"])
    load("block_ratios").main()
    line = next(x for x in capsys.readouterr().out.splitlines() if "block effect" in x)
    assert line.startswith("vu2 b: block effect over 3 blocks of about 2 rounds")
    assert "within-block sd of a round's log ratio 0.00%" in line  # b's rounds are a's times the block's factor


def test_block_ratios_correlates_two_metrics_block_by_block(tmp_path, capsys, monkeypatch):
    factor = {1: 1.02, 2: 0.97, 3: 1.05, 4: 1.01}  # b's throughput per block; its CPU per transaction the inverse
    rows = [{**_row(c, b, "vu8", 100.0 * (f if c == "b" else 1), test="tpcc"), "metric": "tpm"}
            for c in ("a", "b") for b, f in factor.items()]
    rows += [{**_row(c, b, "vu8", 2.0 / (f if c == "b" else 1), test="tpcc"), "metric": "cpu"}
             for c in ("a", "b") for b, f in factor.items()]
    monkeypatch.setattr(sys, "argv", ["block_ratios.py", str(_run(tmp_path, rows)), "--test", "tpcc", "--metric",
                                      "tpm", "--with", "cpu"])
    load("block_ratios").main()
    out = capsys.readouterr().out
    assert "vu8 b: per-block log ratios of tpm and cpu correlate at -1.00 over 4 blocks" in out
    assert next(x for x in out.splitlines() if x.startswith("vu8")).endswith("3 of 4")  # more TPM is faster


def test_visit_noise_gives_a_headline_as_percentage_and_as_time_added(tmp_path):
    module = load("visit_noise")
    plain = {1: 0.010, 2: 0.012, 3: 0.014}
    rows = [_row("a", b, "writes", v, test="sql") for b, v in plain.items()]
    rows += [_row("b", b, "writes", v + 0.005, test="sql") for b, v in plain.items()]  # a fixed 5 ms added
    data = module.headline_blocks(_run(tmp_path, rows) / "measurements.csv")
    assert data["writes"]["b"] == {1: pytest.approx(0.015), 2: pytest.approx(0.017), 3: pytest.approx(0.019)}
    assert set(data) == {"writes"}


def test_visit_noise_headline_table(tmp_path, capsys):
    module = load("visit_noise")
    data = {"writes": {"a": {1: 0.010, 2: 0.012, 3: 0.014}, "b": {1: 0.015, 2: 0.017, 3: 0.019}}}
    module.headlines(data, "a", ["b"])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("writes"))
    cells = line.split()
    assert cells[:3] == ["writes", "b", "3"]
    assert float(cells[7]) == pytest.approx(5.0, abs=1e-3) and float(cells[8]) == pytest.approx(0.0, abs=1e-3)
    assert float(cells[5]) < -0.99  # a fixed time added: the ratio falls as the plain twin gets slower
    ratios = [100 * math.log(b / a) for a, b in ((0.010, 0.015), (0.012, 0.017), (0.014, 0.019))]
    mean = sum(ratios) / 3
    lag1 = (sum((ratios[i] - mean) * (ratios[i - 1] - mean) for i in (1, 2))
            / sum((x - mean) ** 2 for x in ratios))
    assert float(cells[6]) == pytest.approx(lag1, abs=0.01)  # how the ratio follows itself from block to block


def test_visit_noise_shares_the_blocks_wall_time_between_statements(tmp_path):
    module = load("visit_noise")
    visit = {"test": "sql", "metric": "visit_elapsed", "status": "ok", "round": 1, "value": 0.01}
    rows = [{**visit, "config": c, "block": b, "step": step, "started_at": f"2026-11-30T08:00:{s:06.3f}Z"}
            for b, c, step, s in [(1, "a", "q1", 0), (1, "b", "q1", 1), (1, "a", "w1", 2), (1, "b", "w1", 5),
                                  (2, "b", "q1", 10), (2, "a", "q1", 11), (2, "b", "w1", 13)]]
    shares = module.wall_shares(_run(tmp_path, rows) / "measurements.csv")
    # q1: 1 + 1 (block 1) + 1 + 2 (block 2) = 5 s; w1: 3 s (block 1; each block's last visit has no end)
    assert shares == {"q1": pytest.approx(5 / 8), "w1": pytest.approx(3 / 8)}


def test_visit_noise_counts_the_visits_a_stall_slowed():
    module = load("visit_noise")
    visits = {(1, r): 0.002 for r in range(1, 9)} | {(2, 1): 0.0061, (2, 2): 0.0059}
    assert module.stalls(visits) == 1  # 6.1 ms is over 3 x the 2-ms median, 5.9 ms is not


def test_visit_noise_block_ratios_by_estimator_leave_a_stall_out_only_when_trimmed():
    module = load("visit_noise")
    plain = {(b, r): (10.0 if r == 5 else 1.0) for b in (1, 2) for r in range(1, 6)}  # one stall per block
    other = {(b, r): 1.1 for b in (1, 2) for r in range(1, 6)}
    trimmed = module.block_log_ratios(plain, other, module.ESTIMATORS["trimmed 20%"])
    assert trimmed == [pytest.approx(math.log(1.1))] * 2
    arithmetic = module.block_log_ratios(plain, other, module.ESTIMATORS["arithmetic"])
    assert arithmetic == [pytest.approx(math.log(1.1 / 2.8))] * 2  # the stall: (4 + 10) / 5 = 2.8


def test_duet_sides_counts_the_blocks_each_cpu_set_won_and_its_groups_cpu(tmp_path, capsys):
    """Block 1 began with a on CPU 1 and a was faster; block 2 with b on CPU 1 and b was faster."""
    rows = [_row("a", 1, "q14", 10.0), _row("b", 1, "q14", 10.3), _row("a", 2, "q14", 10.0), _row("b", 2, "q14", 9.6)]
    rows += [{**_row(c, b, "q14", cpu, test="duet"), "metric": "cgroup_cpu"}
             for c, b, cpu in (("a", 1, 7.0), ("b", 1, 5.0), ("a", 2, 4.0), ("b", 2, 7.5))]
    run = _run(tmp_path, rows)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["schedule"] = {"name": "duet", "pairs": {"1": [["q14", "1|0", 300.0, 0]], "2": [["q14", "0|1", 250.0, 3]]}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert load("duet_sides").main([str(run)]) == 0
    out = capsys.readouterr().out
    assert f"{100 * math.log(10.3 / 10.0):+.2f}" in out and f"{100 * math.log(9.6 / 10.0):+.2f}" in out
    assert "began on CPU set 1 was the faster in 2 blocks, by 2.96% to 4.08%" in out
    assert "began on CPU set 1 was charged +2.0 to +3.5 s" in out


def test_duet_sides_refuses_a_run_of_another_schedule(tmp_path, capsys):
    assert load("duet_sides").main([str(_run(tmp_path, [_row("a", 1, "q14", 1.0)]))]) == 2
    assert "not a --schedule duet run" in capsys.readouterr().err


def test_fp_run_effect_finds_an_offset_a_runs_blocks_share(tmp_path, capsys):
    """Three A/A runs of four blocks; the second twin of the second run is 3% slower in every block (as a twin whose
    files lie where the disk reads slower would be): the ANOVA of block ratios by run finds it; without it, none."""
    noise = [0.4, -0.3, 0.1, -0.2]
    for offset, expect_effect in ((3.0, True), (0.0, False)):
        runs = []
        for r, shift in enumerate((0.0, offset, 0.0)):
            rows = [_row("a", b + 1, "total", 10.0) for b in range(4)]
            rows += [_row("b", b + 1, "total", 10.0 * math.exp((shift + noise[(b + r) % 4]) / 100)) for b in range(4)]
            (tmp_path / f"{offset}-{r}").mkdir()
            runs.append(_run(tmp_path / f"{offset}-{r}", rows))
        load("precision").run_effect(runs, ("power", "total", "elapsed"))
        line = capsys.readouterr().out.strip()
        assert line.startswith("power/total/elapsed: run effect over 3 runs of about 4 blocks")
        between = float(line.split("between-run sd ")[1].split("%")[0])
        p = float(line.split("p = ")[1].split(")")[0])
        assert (between > 1.0 and p < 0.001) if expect_effect else (between == 0.0 and p > 0.5)
        means = [float(x) for x in line.split("run means ")[1].rstrip("%").split(", ")]
        assert means == pytest.approx([0.0, offset, 0.0], abs=0.01)


def test_wait_split_charges_both_twins_the_blocks_common_wait_per_read(tmp_path, capsys, monkeypatch):
    """Twin b waits 10% longer per read in every block but does the same work: its elapsed time differs, its time at
    the block's common wait per read does not; a twin with 5% more CPU is 5% · C / E* slower at the common wait."""
    def rows(b_cpu: float) -> list[dict]:
        out = []
        for block in (1, 2, 3):
            for config, cpu, wait_per_read in (("a", 10.0, 1e-4), ("b", b_cpu, 1.1e-4)):
                reads = 100000.0 + block
                for test, metric, value in (("power", "elapsed", cpu + reads * wait_per_read),
                                            ("power", "server_cpu", cpu), ("counters", "pages_read", reads)):
                    out.append({**_row(config, block, "total", value, test=test), "metric": metric})
        return out

    (tmp_path / "same").mkdir()
    monkeypatch.setattr(sys, "argv", ["wait_split.py", str(_run(tmp_path / "same", rows(10.0)))])
    load("wait_split").main()
    out = capsys.readouterr().out
    line = {x.split()[0]: x.split() for x in out.splitlines() if x.startswith("  ")}
    assert line["wait_per_read"][2] == f"{100 * math.log(1.1):+.2f}%"
    assert line["at_common_wait"][2] == "+0.00%" and line["elapsed"][2] != "+0.00%"
    (tmp_path / "more").mkdir()
    pairs = load("wait_split").block_pairs(_run(tmp_path / "more", rows(10.5)), "total")
    plain, config = pairs["at_common_wait"]
    assert config - plain == pytest.approx(np.full(3, 0.5))  # the same reads at the same wait: only the CPU differs
    assert plain == pytest.approx(10.0 + 1.05e-4 * (100000.0 + np.arange(1, 4)))


def test_memory_draw_times_every_pass_over_fresh_memory_and_says_what_the_guest_reports(tmp_path, monkeypatch):
    script = load("memory_draw")
    index = np.arange(0, (1 << 20) // 8, 64)
    times = script.one_draw(1, 3, index)
    assert len(times) == 3 and all(t > 0 for t in times)
    monkeypatch.setattr(script, "REPORTING", tmp_path / "none")
    assert script.reporting_state() == "no free page reporting module"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "min_free_ms").write_text("0\n")
    (tmp_path / "p" / "walked").write_text("5\n")
    monkeypatch.setattr(script, "REPORTING", tmp_path / "p")
    assert script.reporting_state() == "min_free_ms=0"


def test_wait_split_correlates_one_steps_block_ratios_with_anothers(tmp_path):
    """q02's twin b is slower exactly in the blocks q01's is: a correlation of +1 for the elapsed time."""
    rows = []
    for block, slow in ((1, 1.1), (2, 0.95), (3, 1.05), (4, 1.0)):
        for step, factor in (("q01", slow), ("q02", slow ** 2)):
            for config, f in (("a", 1.0), ("b", factor)):
                for test, metric, value in (("power", "elapsed", 2.0 * f), ("power", "server_cpu", 1.0),
                                            ("counters", "pages_read", 1000.0)):
                    rows.append({**_row(config, block, step, value, test=test), "metric": metric})
    lines = load("wait_split").step_correlations([_run(tmp_path, rows)], "q01", ["q02"])
    assert lines[0] == "  elapsed of q01 with the same block's: q02 +1.00 (4 blocks)"


def test_wait_split_gives_the_half_width_as_precision_does():
    """The larger distance from the estimate to an end of the interval, not half its width (a log-scale interval is
    asymmetric in percent)."""
    interval = load("wait_split").Interval(1.0, 0.0, 3.0)
    assert interval.half_width_pp == 2.0
