"""benchmarks/irq_charge.py: the file it reads, the spinner's batches and the reader beside it on one CPU."""

from __future__ import annotations

import os

import pytest

from tests.benchscripts import load

charge = load("irq_charge")


def test_a_reader_beside_the_spinner_reads_and_the_spinner_times_every_batch(tmp_path):
    try:
        path = charge.write_file(tmp_path, 2)
    except OSError as exc:  # a filesystem without O_DIRECT (tmpfs)
        pytest.skip(f"no O_DIRECT here: {exc}")
    assert path.stat().st_size == 2 * 1024 * 1024
    cpu = min(os.sched_getaffinity(0))
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    path.unlink()  # as the script does: the reader reads the open file
    try:
        batches, rate = charge.with_reads(fd, cpu, 0.3)
    finally:
        os.close(fd)
    assert batches and all(b > 0 for b in batches)
    assert rate > 0  # the reader ran, on the same CPU, and stopped when asked
    assert charge.spin_batches(0.05)
