"""The encrypt workload's phase logic: seconds to phases, phase figures, paired ratios, bad options."""

from __future__ import annotations

import math

import pytest

from tdebench.errors import UsageError
from tdebench.workloads.encrypt.options import parse_options
from tdebench.workloads.encrypt.phases import (Phase, longest_zero_run, paired_ratio, phase_stats, seconds_of)
from tdebench.workloads.encrypt.record import series_owners, summarize
from tdebench.engines.mariadb.switch import classify
from tdebench.workloads.tpcc.histogram import Histogram


def test_seconds_go_to_the_phase_holding_their_middle() -> None:
    phases = [Phase("t1.before", 0.0, 3.0), Phase("t1.during_on", 3.0, 5.6), Phase("t1.after_on", 5.6, 9.0)]
    assert seconds_of(phases[0], phases) == [0, 1, 2]
    assert seconds_of(phases[1], phases) == [3, 4, 5]  # 5.5 < 5.6
    assert seconds_of(phases[2], phases) == [6, 7, 8]


def test_a_switch_shorter_than_a_second_still_gets_a_second() -> None:
    phase = Phase("t4.during_on", 3.1, 3.3)
    assert seconds_of(phase, [phase]) == [3]


def test_longest_zero_run_is_the_longest_silence() -> None:
    assert longest_zero_run([5, 0, 0, 3, 0, 0, 0, 1]) == 3
    assert longest_zero_run([1, 2]) == 0


def _hist(*ms: float) -> Histogram:
    h = Histogram()
    for v in ms:
        h.add(int(v * 1e6))
    return h


def test_phase_stats_sum_their_seconds_only() -> None:
    per_second = [[10, 4], [20, 9], [0, 0], [30, 12]]
    latency = [_hist(1, 2), _hist(3), Histogram(), _hist(100)]
    s = phase_stats([1, 2], per_second, latency)
    assert (s.seconds, s.committed, s.new_orders, s.zero_seconds) == (2, 20, 9, 1)
    values = s.values()
    assert values["tpm"][0] == pytest.approx(600.0)
    assert values["latency_max"][0] == pytest.approx(0.003, rel=0.01)
    beyond = phase_stats([3, 4], per_second, latency)  # a second after the series' end counts as silent
    assert (beyond.committed, beyond.zero_seconds) == (30, 1)


def test_paired_ratio_uses_trials_as_the_unit() -> None:
    one = paired_ratio([100.0], [80.0])
    assert one is not None and one.mean == pytest.approx(0.8) and one.low is None
    three = paired_ratio([100.0, 200.0, 100.0], [80.0, 150.0, 90.0])
    assert three is not None and three.n == 3
    assert three.mean == pytest.approx((0.8 * 0.75 * 0.9) ** (1 / 3))  # geometric mean: ratios multiply
    assert 0 < three.low < three.mean < three.high
    assert math.isclose(math.log(three.mean / three.low), math.log(three.high / three.mean))  # symmetric in logs
    wide = paired_ratio([100.0, 100.0], [10.0, 190.0])  # 2 trials far apart: wide, but never below 0
    assert wide is not None and 0 < wide.low < wide.mean < wide.high
    assert paired_ratio([0.0], [5.0]) is None
    assert paired_ratio([100.0, 100.0], [0.0, 50.0]).n == 1  # a phase with nothing committed has no log ratio


def test_summary_pairs_each_phase_with_its_cycles_baseline() -> None:
    history = [{"t1.before/tpm": 100.0, "t1.during_on/tpm": 50.0, "t1.on/time_to_done": 12.0},
               {"t1.before/tpm": 200.0, "t1.during_on/tpm": 120.0, "t1.on/time_to_done": 14.0}]
    out = summarize(history)
    assert out["phases"]["t1.during_on"]["tpm"]["geomean_ratio"] == pytest.approx((0.5 * 0.6) ** 0.5)
    assert out["switches"]["t1.on"]["mean_s"] == pytest.approx(13.0)


def test_mariadb_progress_counts_tablespaces_in_the_target_state() -> None:
    rows = [("innodb_system", 1, 1, None, 0), ("tpcc/stock", 1, 0, 17, 1), ("tpcc/item", None, None, None, None),
            ("innodb_temporary", None, None, None, None)]
    on = classify(rows, on=True)
    assert (on.done, on.in_target, on.total) == (False, 1, 3) and on.pending == ("tpcc/item", "tpcc/stock")
    off = classify(rows, on=False)
    assert (off.done, off.in_target) == (False, 1)
    assert classify([("innodb_system", 1, 1, None, 0)], on=True).done


@pytest.mark.parametrize("raw, word", [({"threads": "0"}, "0 encryption threads"), ({"steady": "-1"}, "steady"),
                                       ({"threads": "1,1"}, "twice"), ({"nonsense": 1}, "unknown"),
                                       ({"iops": "0"}, "between 1 and"), ({"iops": "100,100"}, "distinct"),
                                       ({"iops": "fast"}, "not a whole number"), ({"sf": "nan"}, "option 'sf'")])
def test_bad_options_are_one_line_usage_errors(raw: dict, word: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_options(raw)
    assert word in str(err.value) and "\n" not in str(err.value)


def test_a_resumed_run_reads_its_earlier_trials_back(tmp_path) -> None:
    from tdebench.workloads.encrypt.record import earlier_trials

    path = tmp_path / "measurements.csv"
    head = "run_id,block,trial,config,engine,encryption,workload,test,stream,step,metric,value,unit,started_at,status,round"
    lines = [head,
             "r,1,1,c,mariadb,tde,encrypt,encrypt,,t1.before,tpm,100,tpm,,ok,",
             "r,1,1,c,mariadb,tde,encrypt,encrypt,,t1.on,time_to_done,2.5,s,,ok,",
             "r,1,1,c,mariadb,tde,encrypt,encrypt,,t1.during_on,tpm_vs_before,0.5,ratio,,ok,",
             "r,2,2,c,mariadb,tde,encrypt,encrypt,,t1.before,tpm,90,tpm,,failed,",
             "r,1,1,other,mariadb,tde,encrypt,encrypt,,t1.before,tpm,7,tpm,,ok,"]
    path.write_text("\n".join(lines) + "\n")
    assert earlier_trials(path, "c") == [{"t1.before/tpm": 100.0, "t1.on/time_to_done": 2.5}]
    assert earlier_trials(tmp_path / "none.csv", "c") == []


def test_a_switch_shorter_than_a_second_still_names_a_row_of_the_series():
    # a suite run's phases: the switch took 0.45 s and held no second's middle
    phases = [Phase("t2.before", 0.0, 2.033), Phase("t2.during_on", 2.033, 2.486), Phase("t2.after_on", 2.486, 4.509)]
    assert seconds_of(phases[1], phases) == [2] and seconds_of(phases[2], phases) == [2, 3, 4]  # shared second 2
    assert series_owners(phases) == {0: "t2.before", 1: "t2.before", 2: "t2.during_on", 3: "t2.after_on",
                                     4: "t2.after_on"}
