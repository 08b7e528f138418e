"""Files of random bytes and 16-KiB page reads that bypass the page cache: what the scripts that time the disk
itself share (io_bound.py, disk_placement.py, page_cache_layout.py)."""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Sequence
import time
from pathlib import Path

PAGE = 16384
MIB = 1 << 20


def write_random(path: Path, mib: int, sync: bool = True) -> None:
    """A new file of ``mib`` MiB of random bytes (an old one unlinked first, so its blocks are new), on the disk
    when ``sync``."""
    path.unlink(missing_ok=True)
    with open(path, "wb") as handle:
        for _ in range(mib):
            handle.write(os.urandom(MIB))
        if sync:
            handle.flush()
            os.fsync(handle.fileno())


def read_direct(path: Path, offsets: Sequence[int], after: Callable[[], None] | None = None) -> float:
    """Seconds to read the pages at ``offsets`` with O_DIRECT, one at a time, calling ``after`` after each."""
    buffer = mmap.mmap(-1, PAGE)  # page-aligned, as O_DIRECT needs
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        began = time.perf_counter()
        for offset in offsets:
            os.preadv(fd, [buffer], offset)
            if after is not None:
                after()
        return time.perf_counter() - began
    finally:
        os.close(fd)
        buffer.close()
