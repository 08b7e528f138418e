"""Helpers for the engines' threat-model hooks (:class:`tdebench.engines.base.Instance`, docs/security.md).

What is on disk (files under an instance's paths, not entering other mounts: a FUSE mount's decrypted view is
not on the disk), a file's mode as text, and a search of those files for a secret's value in clear. The search
reports file names only; the secret never leaves the caller.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

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


def file_holds(path: Path, needles: list[bytes]) -> bool:
    """True if any needle occurs in the file (read in overlapping chunks; unreadable files hold nothing)."""
    needles = [n for n in needles if n]
    try:
        size = path.stat().st_size
        if not needles or size == 0:
            return False
        overlap = max(len(n) for n in needles) - 1
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            for start in range(0, size, _CHUNK):
                window = view[max(0, start - overlap):min(size, start + _CHUNK)]
                if any(n in window for n in needles):
                    return True
    except (OSError, ValueError):
        return False
    return False


def files_holding(roots: Iterable[Path], needles: list[bytes], exclude: Iterable[Path] = ()) -> list[str]:
    """Paths of the files under ``roots`` that hold any needle (e.g. a key's hex or raw bytes)."""
    return [str(p) for p in files_on_disk(roots, exclude) if file_holds(p, needles)]


def key_forms(hex_key: str) -> list[bytes]:
    """The forms a key can take in a file: its hex digits (either case) and its raw bytes."""
    return [hex_key.lower().encode(), hex_key.upper().encode(), bytes.fromhex(hex_key)]


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
