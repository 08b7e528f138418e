"""Disk busy time from /proc/diskstats: which block device holds a path, and its io_ticks.

``io_ticks`` (the 13th column, "time spent doing I/Os", in ms) grows while the device has at least one request in
flight; its growth over an interval divided by the interval is the disk's busy % (iostat's %util).
"""

from __future__ import annotations

import os
from pathlib import Path

DISKSTATS = Path("/proc/diskstats")
SYS_BLOCK = Path("/sys/block")
_VIRTUAL = ("loop", "ram", "zram", "fd", "sr", "nbd")


def read_io_ticks(path: Path = DISKSTATS) -> dict[str, tuple[int, int, int]]:
    """{device name: (major, minor, io_ticks ms)} for every line of /proc/diskstats (empty if unreadable)."""
    ticks: dict[str, tuple[int, int, int]] = {}
    try:
        text = path.read_text()
    except OSError:
        return ticks
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 13 and parts[0].isdigit() and parts[1].isdigit():
            ticks[parts[2]] = (int(parts[0]), int(parts[1]), int(parts[12]))
    return ticks


def whole_disks(stats: dict[str, tuple[int, int, int]] | None = None) -> list[str]:
    """Physical whole disks: /sys/block entries with a ``device`` link (not loop, ram, zram, dm, md)."""
    stats = read_io_ticks() if stats is None else stats
    disks = []
    try:
        for entry in sorted(SYS_BLOCK.iterdir()):
            if (entry / "device").exists() and entry.name in stats and not entry.name.startswith(_VIRTUAL):
                disks.append(entry.name)
    except OSError:
        pass
    if not disks:  # no sysfs: lines that are not partitions or virtual devices
        names = set(stats)
        disks = sorted(n for n in names if not n.startswith(_VIRTUAL + ("dm-", "md"))
                       and not any(n != o and n.startswith(o) for o in names))
    return disks


def devices_for_path(path: Path | None) -> tuple[list[str], str]:
    """(device names, how they were chosen) for the disk busy % of ``path``.

    The device whose major:minor is ``os.stat(path).st_dev`` when /proc/diskstats lists it (a partition, an LVM or
    dm-crypt device, a whole disk); otherwise (no path, overlayfs, tmpfs, btrfs, NFS) every physical whole disk.
    """
    stats = read_io_ticks()
    if path is not None:
        try:
            dev = os.stat(path).st_dev
        except OSError as exc:
            return whole_disks(stats), f"cannot stat {path} ({exc.strerror}); all whole disks"
        major, minor = os.major(dev), os.minor(dev)
        for name, (maj, mnr, _) in stats.items():
            if (maj, mnr) == (major, minor):
                return [name], f"{name} ({major}:{minor}) holds {path}"
        disks = whole_disks(stats)
        listed = ", ".join(disks) or "none"
        return disks, f"{path} is on device {major}:{minor}, not in /proc/diskstats; all whole disks ({listed})"
    disks = whole_disks(stats)
    return disks, f"no data path given; all whole disks ({', '.join(disks) or 'none'})"


def busy_pct(before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]],
             devices: list[str], elapsed_s: float) -> float | None:
    """Busy % of the busiest of ``devices`` between two readings (None if none can be computed)."""
    if elapsed_s <= 0:
        return None
    values = [min(100.0, max(0.0, (after[d][2] - before[d][2]) / (elapsed_s * 1000) * 100))
              for d in devices if d in before and d in after]
    return max(values) if values else None
