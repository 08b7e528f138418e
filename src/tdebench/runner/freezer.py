"""Holding a twin's server still for ``--schedule turns``: the cgroup freezer.

cgroup v1 has a ``freezer`` hierarchy of its own: a twin's freezer group (named as its other groups,
``tdebench-<pid>-duet-<n>``) holds its server processes only, never tdebench's client thread of that twin (a frozen
client thread would hold up tdebench itself). cgroup v2 freezes a whole group (``cgroup.freeze``); its twin groups
hold the servers only (v2 keeps threads with their process), so there the twin's own group is frozen.
:meth:`Freezer.wait_frozen` returns once every task of the group has stopped (a task in the middle of a disk read
stops when the read returns).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tdebench.engines.toolkit import cgroupfs
from tdebench.runner import cgroups

#: seconds :meth:`Freezer.wait_frozen` waits for every task to stop before it gives up (OSError)
HOLD_TIMEOUT = 5.0


def freezer_base() -> tuple[str, Path] | None:
    """(cgroup version, tdebench's own group's directory) where freezer groups are made; None without one."""
    own = cgroupfs.own_paths()
    for root, point, fstype, options in cgroups.mounts():
        if fstype == "cgroup" and "freezer" in options and "freezer" in own:
            return "1", cgroups.inside(point, root, own["freezer"])
    hier = cgroups.locate()
    if hier is not None and hier.version == "2":
        return "2", hier.bases[0]
    return None


class Freezer:
    """One twin's freezer: ``path`` is a v1 freezer group or the twin's v2 group."""

    def __init__(self, path: Path, version: str) -> None:
        self.path, self.version = path, version
        self._fd: int | None = None

    @classmethod
    def for_twin(cls, name: str, twin_group: cgroups.TwinGroup) -> Freezer:
        """The freezer of the twin whose (CPU, I/O) group is ``twin_group``; v1: a group ``name`` to be made."""
        base = freezer_base()
        if base is None:
            raise OSError("no cgroup freezer: neither a v1 freezer hierarchy nor cgroup v2 is mounted")
        version, directory = base
        return cls(directory / name, "1") if version == "1" else cls(twin_group.paths[0], "2")

    @property
    def owned(self) -> list[Path]:
        """The directories this freezer makes (the run's ownership record lists them before they exist)."""
        return [self.path] if self.version == "1" else []

    def create(self) -> None:
        if self.version == "1":
            self.path.mkdir(exist_ok=True)

    def adopt(self, pids: list[int]) -> None:
        """Move the server processes in (v1; v2's twin group has them already)."""
        if self.version == "1":
            for pid in pids:
                if Path(f"/proc/{pid}").exists():
                    (self.path / "cgroup.procs").write_text(str(pid))

    def _control(self) -> int:
        """The group's freeze control file, opened once: a write is then one system call, with no wait for
        tdebench's interpreter lock between the moment taken and the write."""
        if self._fd is None:
            name = "freezer.state" if self.version == "1" else "cgroup.freeze"
            self._fd = os.open(self.path / name, os.O_WRONLY)
        return self._fd

    def freeze(self) -> int:
        """Ask every task of the group to stop; the ``time.perf_counter_ns()`` taken right before the write."""
        fd, text = self._control(), b"FROZEN" if self.version == "1" else b"1"
        at = time.perf_counter_ns()
        os.write(fd, text)
        return at

    def wait_frozen(self, timeout: float = HOLD_TIMEOUT) -> None:
        """Return once every task has stopped; OSError if they have not within ``timeout``."""
        deadline = time.monotonic() + timeout
        while not self.frozen():
            if time.monotonic() > deadline:
                raise OSError(f"the tasks of {self.path} did not stop within {timeout:g} s")
            os.sched_yield()

    def frozen(self) -> bool:
        if self.version == "1":
            return (self.path / "freezer.state").read_text().strip() == "FROZEN"
        return "frozen 1" in (self.path / "cgroup.events").read_text()

    def release(self) -> int:
        """Let the group run again; the ``time.perf_counter_ns()`` taken right before the write (never raises: it
        is also the way out of an error)."""
        at = time.perf_counter_ns()
        try:
            os.write(self._control(), b"THAWED" if self.version == "1" else b"0")
        except OSError:
            cgroups.thaw(self.path)
        return at

    def close(self) -> None:
        """Close the control file (the group runs again first)."""
        self.release()
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
