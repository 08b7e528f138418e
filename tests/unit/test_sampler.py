"""ResourceSampler on real processes: CPU, IO, marks, children that exit, vanished PIDs, the embedded case."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tdebench.errors import UsageError
from tdebench.measure import diskstats
from tdebench.measure.sampler import CSV_COLUMNS, ResourceSampler, ResourceSeries

MIB = 1024 * 1024

# waits for a command on stdin, then burns CPU, writes a file with fsync, or exits
WORKER = r"""
import os, sys, time
for line in sys.stdin:
    cmd, _, arg = line.strip().partition(" ")
    if cmd == "burn":
        start = time.process_time()
        while time.process_time() - start < float(arg):
            pass
    elif cmd == "write":
        with open(arg, "wb") as fh:
            for _ in range(20):
                fh.write(os.urandom(1 << 20))
            fh.flush()
            os.fsync(fh.fileno())
    elif cmd == "child":  # a short-lived child that burns CPU and is reaped by this process
        import subprocess
        burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < %s: pass" % arg
        subprocess.run([sys.executable, "-c", burn], check=True)
    elif cmd == "exit":
        break
    print("ok", flush=True)
"""


class Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def do(self, command: str) -> None:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ok"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def worker():
    w = Worker()
    yield w
    w.close()


def _on_tmpfs(path: Path) -> bool:
    best = None
    for part in psutil.disk_partitions(all=True):
        if str(path).startswith(part.mountpoint) and (best is None or len(part.mountpoint) > len(best.mountpoint)):
            best = part
    return best is not None and best.fstype in ("tmpfs", "ramfs")


def test_cpu_and_write_bytes_per_step(worker, tmp_path):
    target = tmp_path / "data.bin"
    with ResourceSampler(lambda: [worker.proc.pid], interval=0.25, disk_path=tmp_path) as sampler:
        time.sleep(0.3)                      # idle, unmarked
        sampler.mark("burn")
        worker.do("burn 1.0")
        sampler.mark("write")
        worker.do(f"write {target}")
        sampler.mark(None)
        time.sleep(0.1)
    series = sampler.stop()
    steps = series.per_step()
    assert list(steps) == ["burn", "write"]
    burn, write = steps["burn"], steps["write"]
    assert 0.9 <= burn.server_cpu_s <= 1.4, burn
    assert burn.write_bytes < MIB and burn.spans == 1
    assert write.server_cpu_s < 1.0
    assert write.write_chars >= 20 * MIB
    if not _on_tmpfs(tmp_path):
        assert write.write_bytes >= 20 * MIB, write
    assert burn.peak_rss_bytes > 1 * MIB and burn.seconds >= 0.9
    total = series.total()
    assert total.server_cpu_s >= burn.server_cpu_s + write.server_cpu_s - 1e-9
    assert len(series.samples) >= 6 and {"start", "tick", "mark", "stop"} <= {s.kind for s in series.samples}
    assert all(s.server_procs == 1 for s in series.samples)
    assert any(s.host_cpu_pct is not None for s in series.samples[1:])
    assert series.samples[0].host_cpu_pct is None and series.sampler_cpu_s > 0 and not series.embedded


def test_csv_has_the_columns_and_reads_back(worker, tmp_path):
    with ResourceSampler(lambda: [worker.proc.pid], interval=0.1, disk_path=tmp_path) as sampler:
        sampler.mark("q01")
        worker.do("burn 0.2")
        sampler.mark("q02")
        worker.do("burn 0.1")
    series = sampler.stop()
    path = series.write_csv(tmp_path / "samples" / "trial-1.csv")
    with path.open() as fh:
        header = next(csv.reader(fh))
    assert header[:10] == ["t", "elapsed_s", "step", "server_cpu_s", "server_rss_bytes", "server_read_bytes",
                           "server_write_bytes", "host_cpu_pct", "host_mem_available_bytes", "disk_busy_pct"]
    assert tuple(header) == CSV_COLUMNS
    again = ResourceSeries.read_csv(path).per_step()
    for name, res in series.per_step().items():
        assert again[name].server_cpu_s == pytest.approx(res.server_cpu_s, abs=1e-5)
        assert again[name].write_bytes == res.write_bytes and again[name].spans == res.spans


@pytest.mark.parametrize("interval", [0.05, 30.0])
def test_children_that_exit_are_counted_once(worker, interval):
    # 30 s: the child lives and dies between two samples (only the parent's children_* see it);
    # 0.05 s: it is sampled while alive, then reaped - its CPU must not be counted twice
    with ResourceSampler(lambda: [worker.proc.pid], interval=interval) as sampler:
        sampler.mark("child")
        worker.do("child 0.5")
        sampler.mark(None)
    step = sampler.stop().per_step()["child"]
    assert 0.45 <= step.server_cpu_s <= 0.9, step


def test_repeated_steps_add_up(worker):
    with ResourceSampler(lambda: [worker.proc.pid], interval=0.05) as sampler:
        for _ in range(2):
            with sampler.step("q01"):
                worker.do("burn 0.15")
            worker.do("burn 0.1")
    steps = sampler.stop().per_step(include_unmarked=True)
    assert steps["q01"].spans == 2
    assert 0.25 <= steps["q01"].server_cpu_s <= 0.5
    assert 0.15 <= steps[""].server_cpu_s <= 0.4


def test_a_root_that_appears_later_brings_no_past(worker):
    worker.do("burn 0.4")  # before the sampler watches it: not ours
    watched = {"on": False}
    with ResourceSampler(lambda: [worker.proc.pid] if watched["on"] else [], interval=0.05) as sampler:
        time.sleep(0.1)
        watched["on"] = True
        sampler.mark("late")
        worker.do("burn 0.1")
        sampler.mark(None)
    step = sampler.stop().per_step()["late"]
    assert 0.08 <= step.server_cpu_s <= 0.3, step


def test_vanished_and_missing_pids_are_tolerated():
    short = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    calls = {"n": 0}

    def pids() -> list[int]:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("server restarting")
        return [short.pid, 2**22 + 12345]  # beyond the default pid_max: never exists

    try:
        with ResourceSampler(pids, interval=0.05) as sampler:
            sampler.mark("gone")
            short.wait()
            time.sleep(0.2)
            sampler.mark(None)
    finally:
        short.kill()
        short.wait()
    series = sampler.stop()
    assert series.samples[-1].server_procs == 0 and series.samples[-1].server_rss_bytes == 0
    assert any("gone" in note for note in series.notes)
    assert any("pids_fn failed" in note for note in series.notes)
    assert series.per_step()["gone"].server_cpu_s >= 0


def test_embedded_process_cpu_per_step():
    with ResourceSampler(lambda: [os.getpid()], interval=0.05) as sampler:
        sampler.mark("spin")
        start = time.thread_time()  # this thread's CPU: the process's also holds the sampler thread's
        while time.thread_time() - start < 0.3:
            pass
        sampler.mark("sleep")
        time.sleep(0.3)
        sampler.mark(None)
    series = sampler.stop()
    steps = series.per_step()
    assert series.embedded and any("includes the driver" in n for n in series.notes)
    assert 0.28 <= steps["spin"].server_cpu_s <= 0.45, steps["spin"]
    assert steps["sleep"].server_cpu_s < 0.05, steps["sleep"]  # the sampler's own CPU is taken out
    assert steps["sleep"].read_chars < 64 * 1024  # and so are its /proc reads


def test_mark_outside_a_session_and_bad_interval():
    sampler = ResourceSampler(lambda: [])
    with pytest.raises(RuntimeError):
        sampler.mark("q01")
    with pytest.raises(UsageError):
        ResourceSampler(lambda: [], interval=0)
    with sampler:
        pass
    assert sampler.stop() is sampler.stop()
    with pytest.raises(RuntimeError):
        sampler.mark("late")


def test_disk_busy_math_and_device_choice(tmp_path):
    before = {"vda": (254, 0, 1000), "sdb": (8, 16, 0)}
    after = {"vda": (254, 0, 1250), "sdb": (8, 16, 900)}
    assert diskstats.busy_pct(before, after, ["vda"], 1.0) == pytest.approx(25.0)
    assert diskstats.busy_pct(before, after, ["vda", "sdb"], 1.0) == pytest.approx(90.0)  # the busiest
    assert diskstats.busy_pct(before, after, ["sdb"], 0.5) == 100.0  # capped
    assert diskstats.busy_pct(before, after, ["nvme9n1"], 1.0) is None
    devices, how = diskstats.devices_for_path(tmp_path)
    assert isinstance(devices, list) and how
    stats = diskstats.read_io_ticks()
    assert all(d in stats for d in devices)
