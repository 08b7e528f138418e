"""Helpers for the engines' threat-model hooks (:class:`tdebench.api.engine.Instance`, docs/security.md).

What is on disk (files under an instance's paths, not entering other mounts: a FUSE mount's decrypted view is
not on the disk), a file's mode as text, and a search of those files for a secret's value in clear. The search
reports file names only; the secret never leaves the caller.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from tdebench.engines.toolkit.extents import written_ranges

_CHUNK = 1 << 24


def files_on_disk(roots: Iterable[Path], exclude: Iterable[Path] = ()) -> Iterator[Path]:
    """Regular files under ``roots`` (a root may be a file itself), without following symbolic links, entering
    another mount (a FUSE mount's decrypted view) or descending into ``exclude``; each file once."""
    skip = {os.path.realpath(p) for p in exclude}
    seen: set[str] = set()
    for root in roots:
        top = os.path.realpath(root)
        if top in skip or not os.path.lexists(top):
            continue
        if os.path.isfile(top) and not os.path.islink(root):
            if top not in seen:
                seen.add(top)
                yield Path(top)
            continue
        for directory, subdirs, names in os.walk(top, onerror=lambda _: None):
            subdirs[:] = sorted(d for d in subdirs if os.path.join(directory, d) not in skip
                                and not os.path.ismount(os.path.join(directory, d)))
            for name in sorted(names):
                path = os.path.join(directory, name)
                try:
                    mode = os.lstat(path).st_mode
                except OSError:
                    continue
                if stat.S_ISREG(mode) and path not in seen:
                    seen.add(path)
                    yield Path(path)


def data_chunks(fd: int, size: int, chunk: int) -> Iterator[tuple[int, int]]:
    """(start, end) pieces of at most ``chunk`` bytes that cover a file's data, skipping its holes: a sparse disk
    image of many GiB holds a few MiB (a hole reads as zeros, which no needle contains). Where the filesystem maps
    extents, extents allocated but never written (which read as zeros too) are skipped as well
    (:func:`~tdebench.engines.toolkit.extents.written_ranges`)."""
    written = written_ranges(fd, size)
    if written is not None:
        for lo, hi in written:
            for start in range(lo, hi, chunk):
                yield start, min(start + chunk, hi)
        return
    pos = 0
    while pos < size:
        try:
            data = os.lseek(fd, pos, os.SEEK_DATA)
            hole = os.lseek(fd, data, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data after pos
                return
            data, hole = pos, size  # a filesystem without SEEK_DATA: read it all
        for start in range(data, min(hole, size), chunk):
            yield start, min(start + chunk, hole, size)
        pos = max(hole, pos + 1)


def data_windows(view: mmap.mmap, fd: int, size: int, needles: Iterable[bytes]) -> Iterator[tuple[bytes, int]]:
    """(window, head) over a mapped file's data, for a search of ``needles``: each chunk of :func:`data_chunks`
    with the bytes before it that a needle across the boundary needs; ``head`` is how many leading bytes belong
    to the previous chunk. Windows of zeros only are skipped (a preallocated redo log is hundreds of MiB of
    them) unless a needle is itself all zeros."""
    needles = list(needles)
    overlap = max(len(n) for n in needles) - 1
    skip_zeros = all(n.strip(b"\0") for n in needles)
    for start, end in data_chunks(fd, size, _CHUNK):
        lo = max(0, start - overlap)
        if skip_zeros and not _any_nonzero(view, lo, end):
            continue
        yield view[lo:end], start - lo


def _any_nonzero(view: mmap.mmap, lo: int, end: int) -> bool:
    """Whether the mapped bytes lo..end hold a non-zero byte, read in place (no copy: ~1 ms per 16 MiB cached)."""
    chunk = np.frombuffer(view, dtype=np.uint8, count=end - lo, offset=lo)
    try:
        return bool(chunk.any())
    finally:
        del chunk  # the mapping cannot be closed while an array still exports it


def _found(path: Path, groups: dict[str, list[bytes]]) -> set[str]:
    """Names of the groups with a needle in the file (read once, in overlapping chunks; unreadable: none)."""
    needles = [n for group in groups.values() for n in group if n]
    found: set[str] = set()
    try:
        size = path.stat().st_size
        if not needles or size == 0:
            return found
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            for window, _ in data_windows(view, handle.fileno(), size, needles):
                found.update(name for name, group in groups.items()
                             if name not in found and any(n and n in window for n in group))
    except (OSError, ValueError):
        return set()
    return found


def search_files(roots: Iterable[Path], groups: dict[str, list[bytes]],
                 exclude: Iterable[Path] = ()) -> dict[str, list[str]]:
    """For each named group of needles (e.g. one key's forms), the paths of the files under ``roots`` that hold
    any of them; every file is read once."""
    out: dict[str, list[str]] = {name: [] for name in groups}
    for path in files_on_disk(roots, exclude):
        for name in _found(path, groups):
            out[name].append(str(path))
    return out


def files_holding(roots: Iterable[Path], needles: list[bytes], exclude: Iterable[Path] = ()) -> list[str]:
    """Paths of the files under ``roots`` that hold any needle (e.g. a key's hex or raw bytes)."""
    return search_files(roots, {"": needles}, exclude)[""]


def key_forms(hex_key: str) -> list[bytes]:
    """The forms a key takes in a file: its hex digits as key files and drivers write them, and its raw bytes."""
    return [hex_key.lower().encode(), bytes.fromhex(hex_key)]


def mode_text(path: Path) -> str | None:
    """``0600``-style permission bits of ``path`` (None when it does not exist)."""
    try:
        return f"{stat.S_IMODE(os.lstat(path).st_mode):04o}"
    except OSError:
        return None


def same_disk(a: Path, b: Path) -> bool | None:
    """True when both paths live on the same filesystem (device), None when either is missing."""
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return None
