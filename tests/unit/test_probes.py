"""CPU times and counters read at step boundaries: exact per thread, with the tick fallback when a thread exits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest

from tdebench.api.trial import Recorder
from tdebench.measure.probes import ClientCpu, StepProbe
from tdebench.measure.proctime import TreeCpu

BURNER = textwrap.dedent("""
    import sys, threading, time
    def burn(seconds):
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass
    for line in sys.stdin:
        what, seconds = line.split()
        if what == "thread":  # a thread that burns and exits
            t = threading.Thread(target=burn, args=(float(seconds),)); t.start(); t.join()
            time.sleep(0.1)  # join() returns just before the thread is gone from /proc
        else:
            burn(float(seconds))
        print("done", flush=True)
""")


@pytest.fixture
def burner():
    proc = subprocess.Popen([sys.executable, "-c", BURNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    order(proc, "main", 0.01)  # started and ready: its start-up is in no window
    yield proc
    proc.kill()
    proc.wait()


def order(proc: subprocess.Popen, what: str, seconds: float) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{what} {seconds}\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "done"


def ticks(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def test_tree_cpu_is_exact_per_thread(burner) -> None:
    tree = TreeCpu(lambda: [burner.pid])
    before, t0 = tree.read(), ticks(burner.pid)
    order(burner, "main", 0.3)
    after, t1 = tree.read(), ticks(burner.pid)
    measured = tree.seconds_between(before, after)
    assert 0.3 <= measured < 0.33, measured          # the burn, and a little reading of stdin
    assert abs(measured - (t1 - t0)) <= 0.021        # stat agrees within its two 10 ms ticks
    assert tree.fallbacks == 0


def test_a_thread_that_exits_is_counted_from_the_ticks(burner) -> None:
    tree = TreeCpu(lambda: [burner.pid])
    before = tree.read()
    order(burner, "thread", 0.3)
    after = tree.read()
    assert tree.seconds_between(before, after) >= 0.28  # per-thread ns would have lost the exited thread
    assert tree.fallbacks == 1
    assert TreeCpu.tick_seconds_between(before, after) >= 0.28


def test_client_cpu_leaves_out_background_threads() -> None:
    stop = threading.Event()

    def background() -> None:
        while not stop.is_set():
            pass

    noise = threading.Thread(target=background, daemon=True)
    noise.start()
    try:
        client = ClientCpu()
        before = client.read()
        end = time.thread_time() + 0.2
        while time.thread_time() < end:
            pass
        after = client.read()
        seconds = client.seconds_between(before, after, threading.get_native_id())
    finally:
        stop.set()
        noise.join()
    # the background thread burnt about as much meanwhile (~0.2 s), and is not in it; the window's edges are read
    # through /proc while that thread runs, which leaves up to ~50 ms of uncertainty on a loaded machine
    assert 0.1 <= seconds < 0.3, seconds  # with the background thread in it: ~0.4


def test_step_probe_records_cpu_beside_elapsed_and_counters_per_step(burner) -> None:
    counter = {"pages_read": 0.0, "page_size": 16384.0}

    def counters() -> dict[str, float]:
        counter["pages_read"] += 10  # read at every boundary, so each step sees +10
        return dict(counter)

    probe = StepProbe(lambda: [burner.pid], counters, embedded=False)
    for rep in range(2):  # --repeat 2: two runs of q01, one of q02
        probe.begin("q01", "power", "total")
        order(burner, "main", 0.05 * (rep + 1))
        probe.end()
    probe.begin("q02", "power", "total")
    order(burner, "main", 0.1)
    probe.end()
    probe.begin("vu5")  # a step marked without a test: counters only
    probe.end()
    rec = Recorder("r", 1, "c", "mariadb", "none")
    probe.record(rec)
    rows = {(r.test, r.step, r.metric): r.value for r in rec.rows}
    assert 0.075 <= rows[("power", "q01", "server_cpu")] < 0.09   # the mean of 0.05 and 0.10
    assert 0.1 <= rows[("power", "q02", "server_cpu")] < 0.115
    assert rows[("power", "total", "server_cpu")] == pytest.approx(
        rows[("power", "q01", "server_cpu")] + rows[("power", "q02", "server_cpu")])
    assert rows[("counters", "q01", "pages_read")] == 10 and rows[("counters", "vu5", "pages_read")] == 10
    assert rows[("counters", "total", "pages_read")] == 20   # q01 (per run) + q02
    assert rows[("counters", "q01", "page_size")] == 16384  # a level, not a difference
    assert ("power", "q01", "client_cpu") in rows and ("vu5", "vu5", "server_cpu") not in rows
    units = {(r.step, r.metric): r.unit for r in rec.rows if r.test == "counters"}
    assert units[("q01", "pages_read")] == "pages" and units[("q01", "page_size")] == "bytes"


def test_a_counter_that_fails_is_noted_not_fatal(burner) -> None:
    def broken() -> dict[str, float]:
        raise ConnectionError("server gone")

    probe = StepProbe(lambda: [burner.pid], broken, embedded=False)
    probe.begin("q01", "power")
    probe.end()
    rec = Recorder("r", 1, "c", "mariadb", "none")
    probe.record(rec)
    assert {r.metric for r in rec.rows} == {"server_cpu", "client_cpu"}
    assert "server gone" in probe.notes[0]


def test_a_counter_reset_inside_a_step_records_no_difference(burner) -> None:
    """A server restarted during a step (its counters start again from 0) gives that step no counter row."""
    readings = iter([{"pages_read": 50.0}, {"pages_read": 3.0}, {"pages_read": 9.0}])  # one read per boundary
    probe = StepProbe(lambda: [burner.pid], lambda: next(readings), embedded=False)
    probe.begin("q01", "power")
    probe.end()
    probe.begin("q02", "power")
    probe.end()
    rec = Recorder("r", 1, "c", "mariadb", "none")
    probe.record(rec)
    rows = {(r.test, r.step, r.metric): r.value for r in rec.rows}
    assert ("counters", "q01", "pages_read") not in rows and rows[("counters", "q02", "pages_read")] == 6
