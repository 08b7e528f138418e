"""Sizes on disk are the bytes allocated (st_blocks x 512, what ``du`` counts), never a sparse file's apparent
size: a report once said "data directory (77.2 GiB) scanned" for 4.8 MiB of tables on a sparse disk image."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tdebench.verify.atrest import scan_directory_for
from tdebench.verify.threat_scan import scan_paths
from tdebench.verify.threat_rows import Needles

GIB = 1024 ** 3


@pytest.fixture
def datadir(tmp_path: Path) -> Path:
    """A directory with a small table file and a 1-GiB sparse image holding 8 KiB."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "table.db").write_bytes(b"x" * 20_000)
    with open(root / "disk.img", "wb") as handle:
        handle.write(b"TDEBENCH-CANARY-size" + b"\0" * 8172)
        handle.truncate(GIB)
    if os.stat(root / "disk.img").st_blocks * 512 >= GIB:
        pytest.skip("this filesystem does not keep sparse files sparse")
    return root


def allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def test_the_at_rest_scan_records_allocated_bytes(datadir: Path) -> None:
    canary, = scan_directory_for(datadir, ["TDEBENCH-CANARY-size"])
    sizes = {f.path: f.bytes for f in canary.files}
    assert sizes == {"disk.img": allocated(datadir / "disk.img"), "table.db": allocated(datadir / "table.db")}
    assert canary.to_json()["bytes_scanned"] < GIB // 1000


def test_the_threat_models_scan_says_the_size_on_disk(datadir: Path) -> None:
    scan = scan_paths(sorted(datadir.iterdir()), Needles(("TDEBENCH-CANARY-size",)), [datadir])
    text = scan.text("the data directory")
    assert "GiB" not in text and "KiB" in text, text
    assert scan.bytes == allocated(datadir / "disk.img") + allocated(datadir / "table.db")


def test_an_instances_storage_is_its_allocated_bytes(datadir: Path) -> None:
    from tdebench.api.footprint import allocated_bytes

    assert allocated_bytes(datadir) == allocated(datadir / "disk.img") + allocated(datadir / "table.db")
    assert allocated_bytes(datadir / "disk.img") == allocated(datadir / "disk.img")
    assert allocated_bytes(datadir / "missing") == 0
