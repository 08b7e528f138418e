"""Whether the VM hands freed memory back to its host (measure/host.py), read from a virtio balloon's features."""

from __future__ import annotations

from pathlib import Path

from tdebench.measure.host import free_page_reporting, host_facts


def _balloon(root: Path, features: str) -> Path:
    device = root / "virtio0"
    device.mkdir(parents=True)
    (device / "features").write_text(features + "\n")
    return root


def test_the_reporting_bit_of_the_balloon_says_it(tmp_path: Path) -> None:
    assert free_page_reporting(_balloon(tmp_path / "on", "0110010100000000")) is True
    assert free_page_reporting(_balloon(tmp_path / "off", "0110000100000000")) is False


def test_no_balloon_no_answer(tmp_path: Path) -> None:
    assert free_page_reporting(tmp_path / "absent") is None
    assert free_page_reporting(tmp_path) is None


def test_the_host_facts_carry_it() -> None:
    assert host_facts()["free_page_reporting"] == free_page_reporting()
