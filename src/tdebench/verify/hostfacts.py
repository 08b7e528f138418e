"""Where process memory can reach a disk: core dumps and swap, read from /proc and /sys.

Core dumps: ``/proc/sys/kernel/core_pattern`` (a file name, or ``|program`` piping the dump to a handler such as
systemd-coredump), the process's soft ``RLIMIT_CORE`` from ``/proc/<pid>/limits`` (0 = no file dump; a piped
dump is skipped only at 1, see core(5)), ``/proc/sys/fs/suid_dumpable``. Swap: ``/proc/swaps``; a device whose
device-mapper UUID starts with ``CRYPT-`` is dm-crypt (encrypted). ``VmLck`` in ``/proc/<pid>/status`` is
memory the process locked out of swap.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROC = Path("/proc")


@dataclass
class ProcessMemory:
    """Core-dump limit and locked memory of one process."""

    pid: int
    name: str
    core_soft: str  # "unlimited" or bytes as text, "?" when unreadable
    core_hard: str
    locked_kb: int | None


@dataclass
class MemoryFacts:
    """What decides whether a process's memory (keys, decrypted rows) can land on a disk."""

    core_pattern: str | None
    suid_dumpable: str | None
    swaps: list[dict[str, Any]] = field(default_factory=list)
    processes: list[ProcessMemory] = field(default_factory=list)

    @property
    def pipe(self) -> bool:
        return bool(self.core_pattern and self.core_pattern.startswith("|"))

    def dumps_core(self, process: ProcessMemory) -> bool | None:
        """Would a crash of this process write its memory somewhere (None when not readable)?"""
        if self.core_pattern is None or process.core_soft == "?":
            return None
        if not self.core_pattern.strip():
            return False
        if self.pipe:  # core(5): RLIMIT_CORE is not applied to piped dumps, except that 1 skips them
            return process.core_soft != "1"
        return process.core_soft != "0"

    @property
    def clear_swap(self) -> list[dict[str, Any]]:
        """Active swap areas that are not known to be encrypted."""
        return [s for s in self.swaps if s.get("encrypted") is not True]

    def to_json(self) -> dict[str, Any]:
        return {"core_pattern": self.core_pattern, "suid_dumpable": self.suid_dumpable, "swaps": self.swaps,
                "processes": [asdict(p) for p in self.processes]}


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def parse_limits(text: str) -> tuple[str, str]:
    """(soft, hard) of "Max core file size" in a /proc/<pid>/limits text ("?" when absent)."""
    for line in text.splitlines():
        if line.startswith("Max core file size"):
            parts = line[len("Max core file size"):].split()
            if len(parts) >= 2:
                return parts[0], parts[1]
    return "?", "?"


def parse_swaps(text: str) -> list[dict[str, Any]]:
    """Active swap areas from a /proc/swaps text (the header line skipped)."""
    out = []
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 3:
            out.append({"device": parts[0], "type": parts[1], "size_kb": int(parts[2]) if parts[2].isdigit() else None,
                        "encrypted": swap_encrypted(parts[0])})
    return out


def swap_encrypted(device: str) -> bool | None:
    """True for a dm-crypt device, False for another block device or a file, None when it cannot be told."""
    try:
        real = os.path.realpath(device)
        name = os.path.basename(real)
        if not real.startswith("/dev/"):
            return False  # a swap file: encrypted only if its filesystem is, which is not checked here
        uuid = _read(Path("/sys/class/block") / name / "dm" / "uuid")
        if uuid is None:
            return False if (Path("/sys/class/block") / name).exists() else None
        return uuid.startswith("CRYPT-")
    except OSError:
        return None


def process_memory(pid: int) -> ProcessMemory | None:
    """None when the process is gone (e.g. a short-lived server child) or its limits cannot be read."""
    limits = _read(PROC / str(pid) / "limits")
    if limits is None and not (PROC / str(pid)).exists():
        return None
    soft, hard = parse_limits(limits) if limits else ("?", "?")
    status = _read(PROC / str(pid) / "status") or ""
    name = next((ln.split(":", 1)[1].strip() for ln in status.splitlines() if ln.startswith("Name:")), "?")
    locked = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("VmLck:")), None)
    return ProcessMemory(pid, name, soft, hard, int(locked) if locked and locked.isdigit() else None)


def memory_facts(pids: list[int]) -> MemoryFacts:
    """Core-dump settings, active swap and the given processes' limits."""
    swaps = _read(PROC / "swaps")
    return MemoryFacts(core_pattern=_read(PROC / "sys" / "kernel" / "core_pattern"),
                       suid_dumpable=_read(PROC / "sys" / "fs" / "suid_dumpable"),
                       swaps=parse_swaps(swaps) if swaps else [],
                       processes=[m for m in map(process_memory, pids) if m is not None])
