"""``--schedule turns``' rotation and clock without a database: fake freezers that gate fake servers (threads),
the held-time ledger, and the clock a twin's client reads."""

from __future__ import annotations

import threading
import time

import pytest

from tdebench.api import clock
from tdebench.measure.probes import ClientCpu
from tdebench.runner.turns import HeldTime, Turns


class Gate:
    """A fake freezer: its server thread works only while the gate is open; records whether both ever ran."""

    def __init__(self, label: str, shared: dict[str, bool], fail_after: int | None = None) -> None:
        self.label, self.shared, self.fail_after = label, shared, fail_after
        self.event = threading.Event()
        self.event.set()
        self.holds = 0
        shared[label] = True

    def freeze(self) -> int:
        if self.fail_after is not None and self.holds >= self.fail_after:
            raise OSError("cannot freeze")
        at = time.perf_counter_ns()
        self.holds += 1
        self.event.clear()
        self.shared[self.label] = False
        return at

    def wait_frozen(self) -> None:
        """The fake server stops at its next unit of work (at most 2 ms later)."""

    def release(self) -> int:
        at = time.perf_counter_ns()
        self.shared[self.label] = True
        self.event.set()
        return at


def test_held_time_counts_closed_and_open_stretches():
    ledger = HeldTime()
    ledger.start("a", 100)
    ledger.start("a", 150)  # already held: the first start stands
    assert ledger.held_ns("a", 130) == 30
    ledger.stop("a", 200)
    assert ledger.held_ns("a", 10_000) == 100
    ledger.stop("a", 300)  # not held: nothing added
    ledger.start("a", 1000)
    assert ledger.held_ns("a", 1500) == 600
    assert ledger.held_ns("b", 1500) == 0


def test_the_clock_stands_still_while_held():
    ledger = HeldTime()
    clock.held_by(ledger.holder("x"))
    try:
        began = clock.now_ns()
        ledger.start("x", time.perf_counter_ns())
        time.sleep(0.05)
        during = clock.now_ns()
        ledger.stop("x", time.perf_counter_ns())
        time.sleep(0.02)
        after = clock.now_ns()
    finally:
        clock.held_by(None)
    assert during - began < 5_000_000  # under 5 ms of the 50 ms held
    assert 15_000_000 <= after - began < 45_000_000
    assert clock.now_ns() == pytest.approx(time.perf_counter_ns(), abs=5_000_000)  # no holder: wall time


def test_only_one_twin_runs_at_a_time_and_the_first_runs_at_once():
    shared: dict[str, bool] = {}
    gates = {"a": Gate("a", shared), "b": Gate("b", shared)}
    both: list[bool] = []
    with Turns(gates, HeldTime(), 0.01) as turns:
        assert shared == {"a": True, "b": False}
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            both.append(all(shared.values()))
            time.sleep(0.001)
    assert turns.count >= 10 and not any(both)
    assert shared == {"a": True, "b": True} and len(turns.timings) == gates["a"].holds + gates["b"].holds


def test_a_twin_done_leaves_the_other_to_run_alone():
    shared: dict[str, bool] = {}
    gates = {"a": Gate("a", shared), "b": Gate("b", shared)}
    ledger = HeldTime()
    with Turns(gates, ledger, 0.01) as turns:
        time.sleep(0.05)
        turns.done("a")
        count = turns.count
        assert shared["b"]
        time.sleep(0.05)
        assert turns.count == count and shared["b"]  # no more turns
    held = ledger.held_ns("b", time.perf_counter_ns())
    assert held == ledger.held_ns("b", time.perf_counter_ns() + 10**9)  # no stretch left open


def test_the_client_cpu_of_a_step_leaves_out_the_turns_it_ended_with():
    """A twin done, the rotation stops moving; the CPU its thread used for the turns is no step's: the step that
    goes on alone has only its own (the thread stays until the pair ends, where the probe can take it out)."""
    shared: dict[str, bool] = {}
    gates = {"a": Gate("a", shared), "b": Gate("b", shared)}
    burned = threading.Event()

    class Busy(Turns):
        def _step(self) -> bool:
            began = time.thread_time()
            while time.thread_time() - began < 0.005:
                pass  # the freezes' and releases' CPU
            moving = super()._step()
            if not moving:
                burned.set()
            return moving

    cpu = ClientCpu()
    with Busy(gates, HeldTime(), 0.01) as turns:
        before = cpu.read()  # b's step begins
        time.sleep(0.3)
        turns.done("a")
        assert burned.wait(5)
        time.sleep(0.1)
        used = ClientCpu.seconds_between(before, cpu.read(), threading.get_native_id())  # b's step ends
    assert turns.count > 5 and used < 0.02


def test_a_failing_freeze_stops_the_rotation_with_every_server_running():
    shared: dict[str, bool] = {}
    gates = {"a": Gate("a", shared, fail_after=2), "b": Gate("b", shared)}
    with Turns(gates, HeldTime(), 0.01) as turns:
        time.sleep(0.2)
    assert turns.failed == "cannot freeze" and all(shared.values())


def _server(gate: Gate, work: int, done: threading.Event) -> None:
    """A fake server: ``work`` units of 2 ms, each done only while its gate is open."""
    for _ in range(work):
        gate.event.wait()
        time.sleep(0.002)
    done.set()


def test_each_twin_is_timed_by_what_its_own_server_spent():
    """Two equal fake servers taking turns: each client's clock shows about its server's own work (0.2 s), the
    wall clock nearly twice that."""
    shared: dict[str, bool] = {}
    gates = {"a": Gate("a", shared), "b": Gate("b", shared)}
    ledger = HeldTime()
    timed: dict[str, tuple[float, float]] = {}

    def client(label: str) -> None:
        clock.held_by(ledger.holder(label))
        done = threading.Event()
        wall, own = time.perf_counter_ns(), clock.now_ns()
        threading.Thread(target=_server, args=(gates[label], 100, done)).start()
        done.wait()
        timed[label] = ((clock.now_ns() - own) / 1e9, (time.perf_counter_ns() - wall) / 1e9)
        turns.done(label)

    with Turns(gates, ledger, 0.02) as turns:
        threads = [threading.Thread(target=client, args=(label,)) for label in gates]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for label, (own, wall) in timed.items():
        assert 0.2 <= own < 0.3, (label, own)
    assert max(wall for _, wall in timed.values()) > 0.38
