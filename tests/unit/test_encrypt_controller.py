"""The switch schedule against a stand-in for an instance (the schedule's own logic; the engine side is covered by
tests/e2e/test_encrypt_e2e.py on a real MariaDB)."""

from __future__ import annotations

import threading
import time

from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import OnlineSwitcher
from tdebench.workloads.encrypt.controller import SwitchController
from tdebench.workloads.encrypt.options import parse_options


class Switchable(OnlineSwitcher):
    """A stand-in for an instance and its online switcher at once: reports done ``polls`` progress reads after each
    switch."""

    method = "stand-in"

    def __init__(self, polls: int) -> None:
        super().__init__(self)
        self.polls, self.left, self.calls, self.modified = polls, 0, [], 0.0

    @classmethod
    def switches(cls, spec) -> bool:
        return True

    def switcher(self) -> "Switchable":
        return self

    def start_plain(self) -> dict:
        return {}

    def switch(self, on: bool, threads: int, iops: int | None = None) -> dict:
        self.calls.append((on, threads, iops))
        self.left = self.polls
        return {"on": on}

    def progress(self, on: bool = True) -> SwitchProgress:
        self.modified += 10.0 if self.left else 0.0  # a cumulative counter, as the server's
        self.left = max(0, self.left - 1)
        return SwitchProgress(done=self.left == 0, in_target=4 - min(self.left, 4), total=4,
                              counters={"innodb_encryption_rotation_pages_modified": self.modified},
                              progress_counters=("innodb_encryption_rotation_pages_modified",))

    def server_pids(self) -> list[int]:
        return []


def run(steps, polls=3, **options):
    opts = parse_options({"steady": 0.05, **options})
    marks, stop = [], threading.Event()
    instance = Switchable(polls)
    controller = SwitchController(instance, opts, steps, marks.append, stop)  # type: ignore[arg-type]
    controller.start(time.monotonic())
    assert stop.wait(10)
    controller.join()
    return controller, marks, instance


def test_phases_follow_the_steps_and_the_switch_is_timed_until_done():
    controller, marks, instance = run([("steady", "t2.before"), ("switch", True, 2), ("steady", "t2.after_on")],
                                      iops=500)
    assert not controller.error
    assert [p.name for p in controller.phases] == ["t2.before", "t2.during_on", "t2.after_on"]
    assert all(a.end <= b.start + 1e-9 for a, b in zip(controller.phases, controller.phases[1:]))
    assert marks[-1] is None and "t2.during_on" in marks
    (switch,) = controller.switches
    assert instance.calls == [(True, 2, 500)]
    assert switch.done and switch.seconds > 0 and switch.tablespaces == 4 and len(switch.progress) == 3
    assert switch.counters["innodb_encryption_rotation_pages_modified"] > 0


def test_a_switch_that_never_ends_fails_after_max_switch():
    controller, _, _ = run([("switch", False, 1)], polls=10_000, max_switch=0.3)
    assert "not done after" in controller.error and controller.switches[0].done is False


def test_a_background_that_stops_ends_the_schedule():
    opts = parse_options({"steady": 30})
    stop = threading.Event()
    controller = SwitchController(Switchable(1), opts, [("steady", "t1.before")], lambda s: None, stop)  # type: ignore[arg-type]
    controller.start(time.monotonic())
    started = time.monotonic()
    controller.join()  # what the trial does when the background failed
    assert time.monotonic() - started < 5 and stop.is_set() and "background stopped" in controller.error


def test_iops_swept_names_each_cycle_and_sets_its_rate():
    from tdebench.report.encrypt_view import cycle_settings

    opts = parse_options({"threads": "1,4", "iops": "100,1000"})
    assert [(c.prefix, c.threads, c.iops) for c in opts.cycles()] == [
        ("t1-iops100", 1, 100), ("t1-iops1000", 1, 1000), ("t4-iops100", 4, 100), ("t4-iops1000", 4, 1000)]
    assert [c.prefix for c in parse_options({"threads": "2", "iops": "500"}).cycles()] == ["t2"]  # one rate: as before
    assert cycle_settings("t4-iops1000") == (4, 1000) and cycle_settings("t2") == (2, None)
    assert cycle_settings("offline") == (None, None)
    controller, _, instance = run([("switch", True, 4, 1000, "t4-iops1000")], iops="100,1000")
    assert not controller.error and instance.calls == [(True, 4, 1000)]
    assert [p.name for p in controller.phases] == ["t4-iops1000.during_on"]
    assert controller.switches[0].name == "t4-iops1000.on"


class Forgetful(Switchable):
    """Like MariaDB leaving a tablespace out: 3 of 4 in place, nothing moves, until the switch is asked again."""

    def progress(self, on: bool = True) -> SwitchProgress:
        done = len(self.calls) > 1
        return SwitchProgress(done=done, in_target=4 if done else 3, total=4,
                              counters={"innodb_encryption_rotation_pages_modified": 40.0},
                              progress_counters=("innodb_encryption_rotation_pages_modified",))


def test_a_switch_without_progress_is_asked_for_again(monkeypatch):
    from tdebench.workloads.encrypt import controller as module

    monkeypatch.setattr(module, "STALL", 0.3)
    opts = parse_options({"steady": 0.05, "max_switch": 5})
    stop = threading.Event()
    instance = Forgetful(1)
    controller = SwitchController(instance, opts, [("switch", True, 2)], lambda s: None, stop)  # type: ignore[arg-type]
    controller.start(time.monotonic())
    assert stop.wait(10)
    controller.join()
    (switch,) = controller.switches
    assert not controller.error and switch.done and switch.repeats == 1
    assert instance.calls == [(True, 2, None), (True, 2, None)] and switch.seconds >= 0.3


def test_a_slow_switch_that_moves_is_not_asked_again(monkeypatch):
    from tdebench.workloads.encrypt import controller as module

    monkeypatch.setattr(module, "STALL", 0.3)
    controller, _, instance = run([("switch", True, 2)], polls=6)  # 6 polls of 0.2 s, counters moving
    assert controller.switches[0].done and controller.switches[0].repeats == 0 and len(instance.calls) == 1
