"""The scan skips what the filesystem guarantees reads as zeros (holes, extents allocated but never written), and
nothing else: data still in the page cache over a preallocated region is found."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tdebench.engines.toolkit.exposure import data_chunks
from tdebench.engines.toolkit.extents import written_ranges
from tdebench.verify.atrest import count_in_file

MIB = 1 << 20
NEEDLE = b"TDEBENCH-EXTENT-NEEDLE"


def preallocated(path: Path, size: int) -> int:
    """A file of ``size`` bytes allocated with fallocate (unwritten extents); its descriptor, open for writing."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        os.close(fd)
        pytest.skip(f"no fallocate here: {exc}")
    if written_ranges(fd, size) is None:
        os.close(fd)
        pytest.skip("this filesystem has no extent map (FIEMAP)")
    return fd


def test_unwritten_extents_are_skipped_and_written_ones_read(tmp_path):
    path = tmp_path / "redo"
    fd = preallocated(path, 64 * MIB)
    try:
        os.pwrite(fd, NEEDLE * 1000, 30 * MIB)
        os.fsync(fd)
        chunks = list(data_chunks(fd, 64 * MIB, 4 * MIB))
    finally:
        os.close(fd)
    assert sum(end - start for start, end in chunks) < 2 * MIB  # the 64 MiB are nearly all unwritten
    assert any(start <= 30 * MIB < end for start, end in chunks)
    assert count_in_file(path, [NEEDLE])[NEEDLE.decode()] == 1000


def test_data_still_in_the_page_cache_is_found(tmp_path):
    """A buffered write over a preallocated region stays an unwritten extent until written back: the map is asked
    for with FIEMAP_FLAG_SYNC, so the scan sees it (without the flag, this count is 0)."""
    path = tmp_path / "redo"
    fd = preallocated(path, 64 * MIB)
    try:
        os.pwrite(fd, NEEDLE * 10, 40 * MIB)  # no fsync
        assert count_in_file(path, [NEEDLE])[NEEDLE.decode()] == 10
    finally:
        os.close(fd)


def test_a_filesystem_without_extent_map_is_read_whole(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm (tmpfs)")
    path = shm / f"tdebench-test-extents-{os.getpid()}"
    try:
        path.write_bytes(bytes(3 * MIB) + NEEDLE + bytes(MIB))
        with open(path, "rb") as handle:
            assert written_ranges(handle.fileno(), path.stat().st_size) is None  # tmpfs maps no extents
        assert count_in_file(path, [NEEDLE])[NEEDLE.decode()] == 1
    finally:
        path.unlink(missing_ok=True)
