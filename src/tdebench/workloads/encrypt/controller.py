"""The switch schedule of one background window, run in a thread while the virtual users run that window.

A window is a list of steps: ``("steady", phase)`` runs the background for ``steady`` seconds, ``("switch", on,
threads, iops, prefix)`` starts the engine's own switch and follows it until the engine reports every tablespace in
the target state (phase ``<prefix>.during_on``/``during_off``; the prefix is ``t<threads>`` and the page rate the
options' first when left out), ``("rekey", prefix)`` re-keys every table while the background runs (phase
``<prefix>.during_rekey``), ``("rotate", prefix, threads)`` writes new versions of every key in use on the key
server and follows the engine's re-encryption under them (phase ``<prefix>.during_rotate``). Phase boundaries are
seconds on the window's clock; when the steps end (or fail) the background is told to stop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.engine import Instance
from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import OnlineSwitcher, Rekeying
from tdebench.encryption import redact
from tdebench.workloads.encrypt.options import EncryptOptions
from tdebench.workloads.encrypt.phases import Phase

POLL = 0.2
#: seconds without progress (no tablespace done, no page rotated) after which the switch is asked for again.
#: MariaDB 10.11 can leave a tablespace out of the list its encryption threads work through: in a suite run
#: tpcc/new_order had no encryption row 12 minutes after the switch while every other tablespace was done, and
#: setting innodb_encrypt_tables to the same value again encrypted it at once (it refills that list)
STALL = 10.0


def server_io(pids: list[int]) -> tuple[int, int] | None:
    """Bytes the server processes read from and wrote to storage so far (``/proc/<pid>/io``); None if unreadable."""
    read = written = 0
    for pid in pids:
        try:
            fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
        except (OSError, ValueError):
            return None
        read += int(fields.get("read_bytes", 0))
        written += int(fields.get("write_bytes", 0))
    return read, written


@dataclass
class Switch:
    """One switch as the engine reported it."""

    name: str  # <cycle>.on / <cycle>.off / <cycle>.rekey
    on: bool
    threads: int
    action: str = ""  # on, off or rekey ("" : on/off as ``on`` says)
    method: str = "online"  # online: while the background runs; offline: with it stopped
    start: float = 0.0  # second on the trial's clock (offline switches: between two windows)
    seconds: float = 0.0  # from the SET to the engine's "done"
    done: bool = False
    read_bytes: int | None = None
    write_bytes: int | None = None
    applied: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)  # deltas of the engine's switch counters
    progress: list[tuple[float, float]] = field(default_factory=list)  # (second on the clock, fraction in target)
    tablespaces: int = 0
    stages: list[dict[str, Any]] = field(default_factory=list)  # the method's own stages, timed, with sizes
    disk: dict[str, int] = field(default_factory=dict)  # allocated bytes before, at the peak, after (offline)
    repeats: int = 0  # times the switch was asked for again after STALL seconds without progress


def _movement(progress: SwitchProgress) -> tuple[Any, ...]:
    """What changes while a switch makes progress: the units in place and the engine's progress counters."""
    return (progress.in_target, *sorted((k, v) for k, v in progress.counters.items()
                                        if k in progress.progress_counters))


class SwitchController:
    """Runs the schedule in a thread; ``stop`` (an event the background watches) is set when it ends."""

    def __init__(self, instance: Instance, opts: EncryptOptions, steps: list[tuple[Any, ...]],
                 mark: Callable[[str | None], None], stop: Any) -> None:
        self.instance, self.opts, self.steps = instance, opts, steps
        self.mark, self.stop = mark, stop
        self.phases: list[Phase] = []
        self.switches: list[Switch] = []
        self.error: str = ""
        self.cancelled = threading.Event()
        self.t0 = 0.0
        self._thread = threading.Thread(target=self._main, name="tdebench-encrypt-switch", daemon=True)
        self.rotation_targets: dict[int, int] = {}  # key id -> the version a rotation moved it to
        self._open: tuple[str, float] | None = None

    def start(self, t0: float) -> None:
        self.t0 = t0
        self._thread.start()

    def join(self) -> None:
        self.cancelled.set()
        self._thread.join()

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _main(self) -> None:
        try:
            for step in self.steps:
                if step[0] == "steady":
                    self._steady(step[1])
                elif step[0] == "rekey":
                    self._rekey(step[1])
                elif step[0] == "rotate":
                    self._rotate(step[1], step[2])
                else:  # ("switch", on, threads[, iops, prefix])
                    self._switch(*step[1:])
        except Exception as exc:  # noqa: BLE001 - the trial fails with it
            self.error = f"{type(exc).__name__}: {redact(str(exc))[:400]}"
        finally:
            self._close_phase()
            self.mark(None)
            self.stop.set()

    def _begin_phase(self, name: str) -> None:
        self._close_phase()
        self._open = (name, self.now())
        self.mark(name)

    def _close_phase(self) -> None:
        if self._open is not None:
            name, start = self._open
            self.phases.append(Phase(name, start, self.now()))
            self._open = None

    def _sleep(self, seconds: float) -> None:
        if self.cancelled.wait(seconds):
            raise RuntimeError("the background stopped before the schedule ended")

    def _steady(self, name: str) -> None:
        self._begin_phase(name)
        self._sleep(self.opts.steady)

    def _switch(self, on: bool, threads: int, iops: int | None = None, prefix: str = "") -> None:
        prefix = prefix or f"t{threads}"
        if iops is None and self.opts.iops:
            iops = self.opts.iops[0]
        record = Switch(f"{prefix}.{'on' if on else 'off'}", on, threads)
        self.switches.append(record)
        switcher = self.instance.switcher()
        assert isinstance(switcher, OnlineSwitcher)  # the trial schedules online switches for such a switcher only
        io = server_io(self.instance.server_pids())
        before = switcher.progress(on).counters
        self._begin_phase(f"{prefix}.during_{'on' if on else 'off'}")
        started = time.monotonic()
        record.applied = switcher.switch(on, threads, iops)
        moved, last = (), started
        while True:
            progress = switcher.progress(on)
            record.progress.append((round(self.now(), 3), progress.fraction))
            if progress.done:
                break
            now = time.monotonic()
            if now - started > self.opts.max_switch:
                raise RuntimeError(f"{record.name}: the engine was not done after {self.opts.max_switch:.0f} s "
                                   f"({progress.in_target} of {progress.total} in place; raise max_switch)")
            state = _movement(progress)
            if state != moved:
                moved, last = state, now
            elif now - last > STALL:
                switcher.switch(on, threads, iops)  # the same settings: see STALL
                record.repeats += 1
                last = now
            self._sleep(POLL)
        record.seconds, record.done, record.tablespaces = time.monotonic() - started, True, progress.total
        self._add_io(record, io)
        record.counters = {k: v - before[k] for k, v in progress.counters.items() if k in before}

    def _add_io(self, record: Switch, io: tuple[int, int] | None) -> None:
        """The server's bytes read and written since ``io`` (its reading when the switch began), where both
        readings exist."""
        after_io = server_io(self.instance.server_pids())
        if io is not None and after_io is not None:
            record.read_bytes, record.write_bytes = after_io[0] - io[0], after_io[1] - io[1]

    def _rotate(self, prefix: str, threads: int) -> None:
        """Rotation by key version: as many new versions of every key in use as the engine's key age asks for
        (:meth:`~tdebench.api.keys.KeyRotation.age`), then until every unit is on the newest, timed from the first
        version written."""
        rotation, access = self.instance.key_rotation(), self.instance.key_access
        assert rotation is not None and access is not None
        record = Switch(f"{prefix}.rotate", True, threads, action="rotate", start=self.now())
        self.switches.append(record)
        io = server_io(self.instance.server_pids())
        before = rotation.progress({}).counters
        self._begin_phase(f"{prefix}.during_rotate")
        started = time.monotonic()
        lag, written = rotation.age() + 1, 0
        for key_id, oldest in rotation.versions_in_use().items():
            latest = access.latest_version(key_id)
            while latest < oldest + lag:
                latest, written = access.new_version(key_id), written + 1
            self.rotation_targets[key_id] = latest
        record.applied = {**rotation.start(threads), "versions_written_count": written,
                          "targets": dict(self.rotation_targets)}
        while True:
            progress = rotation.progress(self.rotation_targets)
            record.progress.append((round(self.now(), 3), progress.fraction))
            if progress.done:
                break
            if time.monotonic() - started > self.opts.max_switch:
                raise RuntimeError(f"{record.name}: not every tablespace on the new key version after "
                                   f"{self.opts.max_switch:.0f} s ({progress.in_target} of {progress.total}; raise "
                                   "max_switch)")
            self._sleep(POLL)
        record.seconds, record.done, record.tablespaces = time.monotonic() - started, True, progress.total
        self._add_io(record, io)
        record.counters = {k: v - before[k] for k, v in progress.counters.items() if k in before}

    def _rekey(self, prefix: str) -> None:
        """The engine's online re-keying, timed; its stages (e.g. one per table) on the window's clock."""
        switcher = self.instance.switcher()
        assert isinstance(switcher, Rekeying) and isinstance(switcher, OnlineSwitcher)
        record = Switch(f"{prefix}.rekey", True, 0, action="rekey", start=self.now())
        self.switches.append(record)
        io = server_io(self.instance.server_pids())
        self._begin_phase(f"{prefix}.during_rekey")
        started = time.monotonic()

        def stage(label: str) -> None:
            if self.cancelled.is_set():
                raise RuntimeError("the background stopped before the re-keying ended")
            now = round(time.monotonic() - started, 3)
            if record.stages:
                record.stages[-1]["seconds"] = round(now - record.stages[-1]["start_s"], 3)
            record.stages.append({"name": label, "start_s": now})

        record.applied = switcher.rekey(stage)
        record.seconds = time.monotonic() - started
        if record.stages:
            record.stages[-1]["seconds"] = round(record.seconds - record.stages[-1]["start_s"], 3)
        progress = switcher.progress(True)
        record.done, record.tablespaces = progress.done, progress.total
        record.progress = [(round(record.start, 3), 0.0), (round(self.now(), 3), 1.0)]
        self._add_io(record, io)
        if not progress.done:
            raise RuntimeError(f"{record.name}: re-keyed, but the engine reports {progress.total - progress.in_target}"
                               " tablespace(s) not encrypted")
