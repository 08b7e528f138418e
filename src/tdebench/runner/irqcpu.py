"""Which CPU completes the reads of the disk that holds a directory: the CPU its interrupts are routed to.

``--pin`` keeps the servers on that CPU. A read completes there; a server waiting on another CPU must be woken
across CPUs, and on a virtual machine whose idle CPUs halt, that is a second wake of a halted virtual CPU for every
read (docs/precision.md measures what each placement costs: the reads' time against the CPU time's noise, since
on a kernel without IRQ time accounting a read's completion is charged to whatever task it interrupts).

The device is found from the directory's filesystem (``/sys/dev/block/MAJOR:MINOR``; a partition's disk; a loop
device's backing file), its interrupts from the PCI function above it (``msi_irqs``) and their routing from
``/proc/irq/N/effective_affinity_list``. Interrupts that never fired (a device's configuration vector) are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SYS = Path("/sys")
PROC = Path("/proc")


@dataclass(frozen=True)
class DiskInterrupts:
    """The disk under a directory, its interrupts that fire, and the CPUs they are routed to."""
    device: str
    irqs: tuple[int, ...]
    cpus: tuple[int, ...]


def _disk_of(path: Path, depth: int = 0) -> Path | None:
    """The /sys directory of the whole disk holding ``path`` (through a loop device to its backing file's disk)."""
    try:
        st = os.stat(path)
        block = (SYS / "dev" / "block" / f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve(strict=True)
    except OSError:
        return None
    if (block / "partition").exists():
        block = block.parent
    backing = block / "loop" / "backing_file"
    if backing.exists() and depth < 3:
        try:
            return _disk_of(Path(backing.read_text().strip()), depth + 1)
        except OSError:
            return None
    return block


def _irqs_of(disk: Path) -> list[int]:
    """The interrupt numbers of the PCI function a disk hangs from (none for a virtual disk)."""
    try:
        here = (disk / "device").resolve(strict=True)
    except OSError:
        return []
    while here != here.parent and here != SYS:
        msi = here / "msi_irqs"
        if msi.is_dir():
            return sorted(int(n) for n in os.listdir(msi) if n.isdigit())
        here = here.parent
    return []


def _fired(irqs: list[int]) -> list[int]:
    """The interrupts of ``irqs`` counted at least once in /proc/interrupts."""
    wanted = {str(i) for i in irqs}
    fired = []
    try:
        header, *lines = (PROC / "interrupts").read_text().splitlines()
    except (OSError, ValueError):
        return []
    columns = len(header.split())  # one count per online CPU
    for line in lines:
        head, _, rest = line.partition(":")
        if head.strip() in wanted and any(f.isdigit() and int(f) > 0 for f in rest.split()[:columns]):
            fired.append(int(head))
    return fired


def _cpus_of(irq: int) -> set[int]:
    """The CPUs interrupt ``irq`` is delivered to now (an empty set where the kernel does not say)."""
    try:
        text = (PROC / "irq" / str(irq) / "effective_affinity_list").read_text().strip()
    except OSError:
        return set()
    cpus: set[int] = set()
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def disk_interrupts(directory: Path) -> DiskInterrupts | None:
    """The interrupts of the disk holding ``directory`` and where they go; None where that cannot be read."""
    disk = _disk_of(directory)
    if disk is None:
        return None
    irqs = _fired(_irqs_of(disk))
    cpus: set[int] = set()
    for irq in irqs:
        cpus |= _cpus_of(irq)
    if not irqs or not cpus:
        return None
    return DiskInterrupts(disk.name, tuple(irqs), tuple(sorted(cpus)))
