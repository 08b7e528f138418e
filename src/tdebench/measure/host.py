"""Facts about the machine a run measured on, for the manifest."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import Any

import psutil


def _cpuinfo() -> tuple[str, list[str]]:
    model, flags = platform.processor() or "unknown", []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and model in ("", "unknown", platform.machine()):
                model = value.strip()
            elif key == "flags" and not flags:
                flags = value.split()
    except OSError:
        pass
    return model, flags


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()


def autogroup_enabled() -> bool | None:
    """Whether the scheduler shares the CPUs between sessions first (nice values then rank processes only within a
    session: docs/precision.md, "Steadier machine state"); None where the kernel has no such switch. False also
    where this process sits in a CPU cgroup of its own (a container, a systemd unit): autogroups apply only to the
    root group, and ``/proc/self/autogroup`` is then empty."""
    try:
        switched_on = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
        return switched_on and "nice" in Path("/proc/self/autogroup").read_text()
    except OSError:
        return None


#: VIRTIO_BALLOON_F_REPORTING: the guest reports the memory it frees to the host, which takes it back
BALLOON_REPORTING_BIT = 5


def free_page_reporting(devices: Path = Path("/sys/bus/virtio/drivers/virtio_balloon")) -> bool | None:
    """Whether this machine is a VM that hands the memory it frees back to its host (a virtio balloon with free page
    reporting): memory freed and used again may then cost more than memory kept (docs/memory.md); None where there
    is no virtio balloon."""
    found = sorted(devices.glob("virtio*/features")) if devices.is_dir() else []
    for features in found:
        try:
            bits = features.read_text().strip()
        except OSError:
            continue
        return len(bits) > BALLOON_REPORTING_BIT and bits[BALLOON_REPORTING_BIT] == "1"
    return None


def host_facts(path_for_disk: Path | None = None) -> dict[str, Any]:
    """CPU model and flags (AES-NI), cores, memory, kernel, OS, Python, and the disk holding the data."""
    model, flags = _cpuinfo()
    facts: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "cpu_model": model,
        "cpu_flags": flags,
        "aes_ni": "aes" in flags,
        "cores": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "kernel": platform.release(),
        "os": _os_release(),
        "python": platform.python_version(),
        "autogroup": autogroup_enabled(),
        "free_page_reporting": free_page_reporting(),
    }
    if path_for_disk is not None:
        usage = psutil.disk_usage(str(path_for_disk))
        facts["disk"] = {"path": str(path_for_disk), "total_bytes": usage.total, "free_bytes": usage.free}
    return facts
