"""Which byte ranges of a file hold written data, from the filesystem's extent map (``FS_IOC_FIEMAP``).

A scan for plaintext need not read what the filesystem guarantees to read as zeros: holes, and extents allocated
but never written (``FIEMAP_EXTENT_UNWRITTEN``: MariaDB preallocates its 512 MiB redo log with ``fallocate``, and
``SEEK_DATA`` reports such extents as data once their pages have been read). The map is asked for with
``FIEMAP_FLAG_SYNC``, so that data still in the page cache is written back first and shows as written.
"""

from __future__ import annotations

import fcntl
import struct

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNWRITTEN = 0x800
_HEADER = struct.Struct("=QQIIII")  # fm_start, fm_length, fm_flags, fm_mapped_extents, fm_extent_count, reserved
_EXTENT = struct.Struct("=QQQ2QI3I")  # fe_logical, fe_physical, fe_length, reserved, fe_flags, reserved
_BATCH = 256  # extents asked for per call


def written_ranges(fd: int, size: int) -> list[tuple[int, int]] | None:
    """(start, end) of every extent of the file that holds written data, merged and clipped to ``size``; None
    when the filesystem has no extent map (tmpfs, FUSE): the caller then reads what ``SEEK_DATA`` finds."""
    ranges: list[tuple[int, int]] = []
    start, flags = 0, FIEMAP_FLAG_SYNC
    while start < size:
        buffer = bytearray(_HEADER.pack(start, size - start, flags, 0, _BATCH, 0) + bytes(_EXTENT.size * _BATCH))
        try:
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buffer)
        except OSError:
            return None  # no map (or it failed part way): the caller reads everything SEEK_DATA finds
        flags = 0  # synced once, on the first call
        mapped = _HEADER.unpack_from(buffer)[3]
        if mapped == 0:
            break
        last = False
        for i in range(mapped):
            logical, _, length, _, _, extent_flags, *_ = _EXTENT.unpack_from(buffer, _HEADER.size + i * _EXTENT.size)
            if not extent_flags & FIEMAP_EXTENT_UNWRITTEN:
                _add(ranges, logical, min(logical + length, size))
            start = logical + length
            last = bool(extent_flags & FIEMAP_EXTENT_LAST)
        if last:
            break
    return ranges


def _add(ranges: list[tuple[int, int]], lo: int, hi: int) -> None:
    if hi <= lo:
        return
    if ranges and lo <= ranges[-1][1]:
        ranges[-1] = (ranges[-1][0], max(ranges[-1][1], hi))
    else:
        ranges.append((lo, hi))
