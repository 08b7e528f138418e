"""benchmarks/io_bound.py: the share of a read's added CPU work that shows in its time, per I/O bound."""

from __future__ import annotations

import pytest

from tests.benchscripts import load

io_bound = load("io_bound")


def table(capsys, times, limits, work_ns) -> dict[str, list[str]]:
    io_bound.report(times, limits, work_ns)
    lines = capsys.readouterr().out.splitlines()[1:]
    return {line.split()[0]: line.split() for line in lines}


def test_work_that_adds_its_own_time_shows_in_full_and_a_bound_that_absorbs_it_shows_none(capsys):
    plain = [70e-6, 72e-6, 69e-6, 71e-6]
    times = {(0, 0): plain, (0, 20_000): [t + 20e-6 for t in plain],
             (2000, 0): [500e-6, 500.5e-6, 499.5e-6, 500e-6], (2000, 20_000): [500e-6, 500e-6, 500.2e-6, 499.8e-6]}
    rows = table(capsys, times, [0, 2000], 20_000)
    assert rows["none"][-1] == "100%"
    assert rows["2000"][-1] == "0%"
    assert rows["none"][1] == "70.5"


def test_a_bound_with_noisier_reads_has_the_larger_coefficient_of_variation(capsys):
    steady, noisy = [500e-6] * 3 + [501e-6], [60e-6, 90e-6, 70e-6, 120e-6]
    times = {(0, 0): noisy, (0, 1000): noisy, (5000, 0): steady, (5000, 1000): steady}
    rows = table(capsys, times, [0, 5000], 1000)
    assert float(rows["none"][2]) == pytest.approx(31.13, abs=0.01)  # sd 26.46 us around 85 us
    assert float(rows["5000"][2]) == pytest.approx(0.10, abs=0.01)


def test_the_shared_page_file_is_new_random_and_read_page_by_page(tmp_path):
    pagefile = load("pagefile")
    path = tmp_path / "pages"
    pagefile.write_random(path, 1)
    first = path.read_bytes()
    pagefile.write_random(path, 1)
    assert path.stat().st_size == 1 << 20 and path.read_bytes() != first  # new random bytes each time
    calls = []
    offsets = [3 * pagefile.PAGE, 0, 63 * pagefile.PAGE]
    try:
        seconds = pagefile.read_direct(path, offsets, lambda: calls.append(1))
    except OSError as exc:  # a filesystem without O_DIRECT (tmpfs)
        pytest.skip(f"no O_DIRECT here: {exc}")
    assert seconds > 0 and len(calls) == len(offsets)
