"""A switch done by the engine's own offline method (a copy or a rewrite with no workload connected), timed, with
the disk it takes meanwhile sampled every 100 ms, and its stages (as the engine names them) with their sizes.

Engines that cannot encrypt while serving (SQLCipher's ``sqlcipher_export`` copy and ``PRAGMA rekey``, pgcrypto's
``UPDATE`` of every encrypted column) run this between two background windows: the service is stopped meanwhile,
and the report says so.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from tdebench.api.engine import Instance
from tdebench.api.switcher import OfflineSwitcher, Rekeying, Restarting, Step, Switcher
from tdebench.workloads.encrypt.controller import Switch, server_io

SAMPLE = 0.1


def allocated_bytes(root: Path) -> int:
    """Bytes allocated on disk to the files below ``root`` on its filesystem (``st_blocks``; like ``du -x``: a
    mount inside it, e.g. a gocryptfs mount or a loop-mounted image, is not entered, its backing files are counted
    where they are; files that vanish while walking are skipped: the engine is working)."""
    total = 0
    stack = [str(root)]
    try:
        device = os.stat(root).st_dev
    except OSError:
        return 0
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.stat(follow_symlinks=False).st_dev == device:
                                stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total


class DiskSampler:
    """Samples :func:`allocated_bytes` of a directory every :data:`SAMPLE` seconds in a thread; keeps the peak."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.first = self.peak = self.last = allocated_bytes(root)
        self.samples = 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="tdebench-encrypt-disk", daemon=True)

    def __enter__(self) -> "DiskSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def sample(self) -> int:
        self.last = allocated_bytes(self.root)
        self.peak = max(self.peak, self.last)
        self.samples += 1
        return self.last

    def _main(self) -> None:
        while not self._stop.wait(SAMPLE):
            self.sample()


def run_offline(instance: Instance, action: str, name: str, clock: float) -> Switch:
    """The instance's switcher's offline switch (``action`` on or off), its offline re-keying (rekey), or the
    restart an online switch needs (``restart_on``, ``restart_off``: :class:`~tdebench.api.switcher.Restarting`),
    timed, the disk below the switcher's :attr:`~tdebench.api.switcher.Switcher.root` sampled, its stages recorded;
    ``clock``: the trial's second at which it starts (the timeline). Raises what the engine raised (the trial fails
    with it)."""
    switcher = instance.switcher()
    assert switcher is not None  # EncryptOptions.check_configs refused the config otherwise
    record = Switch(name, action not in ("off", "restart_off"), 1, action=action, method="offline", start=clock)
    stages: list[dict[str, Any]] = []
    io = server_io(instance.server_pids())
    started = time.monotonic()
    with DiskSampler(switcher.root) as disk:
        def stage(label: str) -> None:
            now = round(time.monotonic() - started, 3)
            if stages:
                stages[-1].update(seconds=round(now - stages[-1]["start_s"], 3), end_bytes=disk.sample())
            stages.append({"name": label, "start_s": now, "start_bytes": disk.sample()})

        record.applied = _run(switcher, action, stage)
        record.seconds = time.monotonic() - started
        if stages:
            stages[-1].update(seconds=round(record.seconds - stages[-1]["start_s"], 3), end_bytes=disk.sample())
    progress = switcher.progress(on=action not in ("off", "restart_on", "restart_off"))  # a restart leaves the
    # tables plaintext
    record.done, record.tablespaces = progress.done, progress.total
    if not progress.done:
        raise RuntimeError(f"{name}: the engine's method returned but its status says it is not done "
                           f"({progress.in_target} of {progress.total} in place)")
    after_io = server_io(instance.server_pids())
    if io is not None and after_io is not None:
        record.read_bytes, record.write_bytes = after_io[0] - io[0], after_io[1] - io[1]
    record.stages = stages
    record.disk = {"bytes_before": disk.first, "bytes_peak": disk.peak, "bytes_after": disk.last,
                   "peak_extra_bytes": max(0, disk.peak - disk.first), "samples": disk.samples}
    record.progress = [(clock, 0.0), (clock + record.seconds, 1.0)]
    return record


def _run(switcher: Switcher[Any], action: str, stage: Step) -> dict[str, Any]:
    """What ``action`` asks of the switcher (the trial chose it from the switcher's class:
    :class:`~tdebench.workloads.encrypt.cycle.TrialRun`)."""
    if action.startswith("restart_"):
        assert isinstance(switcher, Restarting)
        return switcher.restart(action == "restart_on", stage) or {}
    if action == "rekey":
        assert isinstance(switcher, Rekeying)
        return switcher.rekey(stage)
    assert isinstance(switcher, OfflineSwitcher)
    return switcher.switch(action == "on", stage)
