"""--pin: the servers keep the CPU the data disk's interrupts go to, tdebench takes another (runner/irqcpu.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tdebench.runner import irqcpu, pinning
from tdebench.runner.irqcpu import DiskInterrupts, disk_interrupts


def fake_machine(root: Path, data: Path, routed: dict[int, str], counts: dict[int, list[int]],
                 partition: bool = False) -> None:
    """A /sys and /proc under ``root`` where ``data``'s filesystem is a virtio disk (or its first partition)
    hanging from a PCI function with interrupts ``routed`` (irq -> effective_affinity_list)."""
    st = os.stat(data)
    pci = root / "sys/devices/pci0000:00/0000:00:02.0"
    disk = pci / "virtio1/block/vda"
    (disk / "vda1").mkdir(parents=True)
    (disk / "vda1" / "partition").write_text("1\n")
    (disk / "device").symlink_to(pci / "virtio1")
    (pci / "msi_irqs").mkdir()
    for irq in routed:
        (pci / "msi_irqs" / str(irq)).write_text("msix\n")
    (root / "sys/dev/block").mkdir(parents=True)
    (root / "sys/dev/block" / f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}").symlink_to(
        disk / "vda1" if partition else disk)
    lines = ["           CPU0       CPU1"]
    for irq, affinity in routed.items():
        (root / "proc/irq" / str(irq)).mkdir(parents=True)
        (root / "proc/irq" / str(irq) / "effective_affinity_list").write_text(affinity + "\n")
        lines.append(f" {irq}: " + " ".join(str(c) for c in counts[irq]) + "  PCI-MSIX-0000:00:02.0  1-edge  virtio1")
    (root / "proc/interrupts").write_text("\n".join(lines) + "\n")


@pytest.fixture
def machine(tmp_path, monkeypatch):
    monkeypatch.setattr(irqcpu, "SYS", tmp_path / "sys")
    monkeypatch.setattr(irqcpu, "PROC", tmp_path / "proc")
    return tmp_path


@pytest.mark.parametrize("partition", [False, True])
def test_the_disks_interrupts_that_fire_and_where_they_go(machine, partition):
    fake_machine(machine, machine, {35: "0", 36: "1"}, {35: [0, 0], 36: [0, 5123]}, partition)
    assert disk_interrupts(machine) == DiskInterrupts("vda", (36,), (1,))  # 35 never fired: left out


def test_spread_interrupts_give_every_cpu(machine):
    fake_machine(machine, machine, {36: "1", 37: "0"}, {36: [0, 9], 37: [7, 0]})
    assert disk_interrupts(machine) == DiskInterrupts("vda", (36, 37), (0, 1))


def test_no_answer_where_the_kernel_does_not_say(machine):
    fake_machine(machine, machine, {36: "1"}, {36: [0, 0]})  # never fired
    assert disk_interrupts(machine) is None
    assert disk_interrupts(machine / "nowhere") is None


def test_this_machines_answer_is_one_of_its_cpus(tmp_path):
    found = disk_interrupts(tmp_path)
    assert found is None or (found.irqs and set(found.cpus) <= set(range(os.cpu_count() or 1)))


@pytest.mark.parametrize(("allowed", "disk", "client"), [
    ({0, 1}, DiskInterrupts("vda", (36,), (0,)), [1]),   # the servers keep the interrupt CPU
    ({0, 1}, DiskInterrupts("vda", (36,), (1,)), [0]),
    ({0, 1, 2, 3}, DiskInterrupts("vda", (36, 37), (0, 1)), [2]),
    ({0, 1}, DiskInterrupts("vda", (36, 37), (0, 1)), [0]),  # every CPU takes them: the first
    ({1, 2}, DiskInterrupts("vda", (36,), (0,)), [1]),   # a CPU this process may not use
    ({0, 1}, None, [0]),
])
def test_the_client_goes_where_the_disk_does_not_interrupt(monkeypatch, allowed, disk, client):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(allowed))
    got_client, servers = pinning.cpu_split(disk)
    assert got_client == client and sorted(servers + client) == sorted(allowed)


def test_the_report_says_where_the_reads_complete():
    from tdebench.report.precision_view import machine_text
    pin = {"client": [0], "servers": [1], "reason": "asked for (--pin)",
           "disk_interrupts": {"device": "vda", "irqs": [36], "cpus": [1]}}
    text = " ".join(machine_text({"settle": {"pin": pin}}))
    assert "tdebench on CPU [0], the servers on CPU [1], where vda's interrupts go" in text
    pin["disk_interrupts"]["cpus"] = [0, 1]
    assert "interrupts go" not in " ".join(machine_text({"settle": {"pin": pin}}))
