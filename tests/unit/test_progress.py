"""Progress of long runs: trials left and time left, and timestamped phase lines when output is a log file."""

from __future__ import annotations

import io

from rich.console import Console

from tdebench.cli.ui import RichListener
from tdebench.runner.progress import RunProgress, human_duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_position_and_time_left_come_from_the_trials_finished() -> None:
    clock = Clock()
    p = RunProgress(4, clock=clock)
    assert p.label() == "1 of 4 trials" and p.left() is None
    for seconds in (60.0, 180.0):
        p.start()
        clock.now += seconds
        p.finish()
    assert p.done == 2
    assert p.left() == 240.0  # mean 120 s x 2 trials to go
    assert p.label() == "3 of 4 trials, ~4 min left"
    p.start(); clock.now += 120; p.finish()
    p.start(); clock.now += 120; p.finish()
    assert p.left() == 0 and p.label() == "4 of 4 trials, ~0 s left"


def test_durations_read_as_a_person_would_say_them() -> None:
    assert human_duration(42) == "42 s"
    assert human_duration(12 * 60 + 10) == "12 min"
    assert human_duration(65 * 60) == "1 h 05 min"


def _listener(terminal: bool) -> tuple[RichListener, io.StringIO, Clock]:
    buffer, clock = io.StringIO(), Clock()
    console = Console(file=buffer, force_terminal=terminal, width=200)
    return RichListener(console, clock=clock), buffer, clock


def test_a_log_file_gets_one_line_per_phase_with_its_duration() -> None:
    listener, buffer, clock = _listener(terminal=False)
    with listener:
        listener.task_started("load-a", "load mariadb-none", 8)
        listener.task_advanced("load-a", 1, "load mariadb-none: lineitem")
        clock.now += 754
        listener.task_finished("load-a")
        listener.task_finished("load-a")  # twice: said once
    lines = [line for line in buffer.getvalue().splitlines() if line.strip()]
    assert len(lines) == 2, lines
    assert lines[0].endswith("load mariadb-none …")
    assert lines[1].endswith("load mariadb-none: done in 13 min")
    assert lines[0][:2].isdigit() and lines[0][2] == ":", "timestamped"


def test_a_terminal_gets_bars_not_lines() -> None:
    listener, buffer, clock = _listener(terminal=True)
    with listener:
        listener.task_started("trial", "trial 1/3 mariadb-none", None)
        clock.now += 5
        listener.task_finished("trial")
    assert "done in" not in buffer.getvalue()


def test_time_left_counts_what_runs_between_trials_and_leaves_the_warm_up_out() -> None:
    """A run said "~17 s left" two minutes before its end: its estimate was the mean time inside the trials so far,
    a short warm-up block included, and nothing of the restarts between blocks. Here a 10-s warm-up, then
    measured trials of 30 s, each after a 20-s restart: 50 s per measured trial."""
    clock = Clock()
    p = RunProgress(5, warmup=1, clock=clock)
    p.start(); clock.now += 10; p.finish(warmup=True)
    assert p.left() is None  # nothing measured yet says what a measured trial takes
    for done in range(1, 5):
        clock.now += 20  # the restart before the block: outside the trial, still the run's time
        p.start(); clock.now += 30; p.finish()
        assert p.left() == 50 * (4 - done)
    assert p.label() == "5 of 5 trials, ~0 s left"


def test_a_run_with_a_time_limit_is_not_promised_its_trial_cap() -> None:
    """A --precision or --max-time run: 4,004 trials is a cap, the time limit ends it ("~6 h left" was said of a
    run with 40 minutes to go)."""
    clock = Clock()
    p = RunProgress(4004, warmup=4, clock=clock)
    p.deadline = clock.now + 1800
    p.start(); clock.now += 20; p.finish(trials=4, warmup=True)
    p.start(); clock.now += 20; p.finish(trials=4)
    assert p.left() == 1760 and p.label() == "9 of at most 4004 trials, ~29 min left"
    clock.now += 5000
    assert p.left() == 0
