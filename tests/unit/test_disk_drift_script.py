"""benchmarks/disk_drift.py: both layouts write two whole files; the lag-1 autocorrelation it prints."""

from __future__ import annotations

import pytest

from tests.benchscripts import load

drift = load("disk_drift")


@pytest.mark.parametrize("layout", ["separate", "interleaved"])
def test_both_files_are_written_whole(tmp_path, layout):
    try:
        paths = drift.write_files(tmp_path, 1, layout, 64)
    except OSError as exc:  # a filesystem without O_DIRECT (tmpfs)
        pytest.skip(f"no O_DIRECT here: {exc}")
    assert [p.stat().st_size for p in paths] == [1024 * 1024] * 2
    assert paths[0].read_bytes() == paths[1].read_bytes()  # the same chunk everywhere


def test_lag1_of_a_trend_and_of_an_alternation():
    assert drift.lag1([1.0, 2.0, 3.0, 4.0]) == pytest.approx(0.25)
    assert drift.lag1([1.0, -1.0, 1.0, -1.0]) == pytest.approx(-0.75)
    assert drift.lag1([2.0, 2.0, 2.0]) == 0.0


def test_the_busiest_interrupt_lines_and_their_cpus():
    before = {"virtio1-req.0": [0, 100], "timer": [10, 10], "idle": [5, 5]}
    after = {"virtio1-req.0": [0, 900], "timer": [40, 30], "idle": [5, 5]}
    assert drift.busiest_lines(before, after) == ["virtio1-req.0: CPU0 0, CPU1 800", "timer: CPU0 30, CPU1 20"]
    assert drift.busiest_lines(before, before) == []  # nothing fired: nothing named


def test_interrupts_reads_every_line_with_its_name():
    counts = drift.interrupts()
    assert counts, "/proc/interrupts has lines on Linux"
    assert len({len(v) for v in counts.values()}) == 1  # one count per CPU on every line
