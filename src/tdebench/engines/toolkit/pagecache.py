"""The OS page cache that serves a server's misses (``--page-source memory``): filled afresh, and how it is laid out.

What a read through the page cache costs depends on how the file sits there, and that is drawn when the file is
read in: in large folios (one kernel object for many 4-KiB pages) or single pages, and in which physical memory.
``benchmarks/page_cache_layout.py`` reads two files of the same size in 16-KiB preads: one cached sequentially
read in 0.46–0.72 of the time of one cached page by page in random order, and two files cached the same way, one
after the other, differed by 6% to 50% (each within about ±1%) until they were cached again (on this kind of VM,
guest memory that was freed and handed back to the host is not all alike when it is used again). Two twins whose
files were cached one after the other can so differ for a whole run by a cost no number of blocks averages out.
:func:`refill_together` evicts the twins' data files and reads them back in turn, 1 MiB of each twin's at a time,
so every twin's pages come from the same stretch of memory, and :func:`large_folio_share` says how they came out
(recorded with the restart).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
from functools import lru_cache
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit import memcap

PAGE = mmap.PAGESIZE
#: /proc/kpageflags bits: the first page of a compound (large) folio, and the others
COMPOUND_HEAD, COMPOUND_TAIL = 1 << 15, 1 << 16
PRESENT = 1 << 63
PFN_MASK = (1 << 55) - 1
MAP_FAILED = ctypes.c_void_p(-1).value


def refill(evict_under: Path, read_under: Path) -> dict[str, Any]:
    """Drop the cached pages of every file under ``evict_under`` and read the files under ``read_under`` back in
    sequentially (the server may run: its clean pages are dropped, its dirty ones written first)."""
    return refill_together([(evict_under, read_under)])[0]


def refill_together(sets: list[tuple[Path, Path]]) -> list[dict[str, Any]]:
    """:func:`refill` for several twins at once, their files read in turn 1 MiB at a time: every set's pages then
    come from the same stretch of the kernel's allocations, so no twin gets the memory the others do not (on a VM
    one stretch of guest memory can be slower than another, :mod:`tdebench.engines.toolkit.pagecache`). One dict
    of facts per set, in order."""
    for evict_under, _ in sets:
        memcap.evict_files(evict_under)
    readers = {i: memcap.read_chunks(read_under) for i, (_, read_under) in enumerate(sets)}
    read = [0] * len(sets)
    while readers:
        for i in list(readers):
            got = next(readers[i], None)
            if got is None:
                del readers[i]
            else:
                read[i] += got
    out = []
    for (_, read_under), total in zip(sets, read):
        facts: dict[str, Any] = {"page_cache_refilled_bytes": total}
        share = large_folio_share(read_under)
        if share is not None:
            facts["page_cache_large_folio_share"] = round(share, 4)
        out.append(facts)
    return out


def large_folio_share(directory: Path) -> float | None:
    """The share of the cached 4-KiB pages of the files under ``directory`` that sit in large folios; None where
    the kernel does not say (not root, no /proc/kpageflags, nothing cached)."""
    try:
        with open("/proc/self/pagemap", "rb", buffering=0) as pagemap, \
                open("/proc/kpageflags", "rb", buffering=0) as flags:
            counts = [_file_folios(path, pagemap.fileno(), flags.fileno())
                      for path in Path(directory).rglob("*") if path.is_file() and not path.is_symlink()]
    except OSError:
        return None
    cached = sum(c[0] for c in counts)
    return sum(c[1] for c in counts) / cached if cached else None


def _file_folios(path: Path, pagemap: int, flags: int) -> tuple[int, int]:
    """(cached pages, of them in large folios) of one file: map it, fault in only the pages mincore says are
    cached (no read reaches the disk), then look up each page's frame and its flags."""
    try:
        size = path.stat().st_size
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return 0, 0
    libc = _libc()
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0) if size else None
    finally:
        os.close(fd)
    if not address or address == MAP_FAILED:
        return 0, 0
    try:
        return _mapped_folios(address, size, pagemap, flags, libc)
    finally:
        libc.munmap(ctypes.c_void_p(address), ctypes.c_size_t(size))


def _mapped_folios(address: int, size: int, pagemap: int, flags: int, libc: ctypes.CDLL) -> tuple[int, int]:
    pages = (size + PAGE - 1) // PAGE
    vector = (ctypes.c_ubyte * pages)()
    if libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(size), vector) != 0:
        return 0, 0
    resident = [i for i in range(pages) if vector[i] & 1]
    for i in resident:
        ctypes.c_char.from_address(address + i * PAGE).value  # a minor fault: pagemap can then name its frame
    entries = os.pread(pagemap, pages * 8, address // PAGE * 8)
    large = 0
    for i in resident:
        (entry,) = struct.unpack_from("<Q", entries, i * 8)
        if entry & PRESENT:
            (bits,) = struct.unpack("<Q", os.pread(flags, 8, (entry & PFN_MASK) * 8))
            large += bool(bits & (COMPOUND_HEAD | COMPOUND_TAIL))
    return len(resident), large


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    return libc
