"""How much disk an engine's instance takes per byte of input data (the disk guard's input)."""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
GIB = 1024 * MIB


@dataclass(frozen=True)
class Footprint:
    """Bytes one instance needs per byte of raw input, measured per engine and mechanism.

    ``peak`` while loading (indexes being built, logs not yet recycled), ``final`` after the load, ``log`` of
    write-ahead log per input byte (capped by ``log_cap`` bytes), plus ``fixed`` bytes (system tables, the
    pre-allocated redo log) whatever the size.
    """

    peak: float
    final: float
    fixed: int
    log: float = 0.0
    log_cap: float = math.inf


# Engines nobody measured (MySQL: no Debian 12 package) get a generous guess: InnoDB-like, larger margins.
UNMEASURED = Footprint(peak=6.0, final=4.0, fixed=1 * GIB)

DEFAULT_REDO = 96 * MIB  # MariaDB's own default innodb_log_file_size
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.I)


def size_setting(value: str | None, unit: int, default: int) -> int:
    """Bytes of a size setting such as ``4GB``, ``512M`` or ``1024`` (in ``unit``); ``default`` if unreadable."""
    match = _SIZE.match(value or "")
    if not match:
        return default
    number, prefix = float(match.group(1)), match.group(2).lower()
    scale = 1024 ** ("kmgt".index(prefix) + 1) if prefix else unit
    return int(number * scale)



def allocated_bytes(root: Path) -> int:
    """Bytes allocated on disk to the file ``root``, or to every file below the directory ``root``: st_blocks × 512,
    what ``du`` counts. Every size on disk tdebench shows is this: a sparse file (a disk image, a preallocated log)
    counts the blocks it holds, not its apparent size. Symbolic links are not followed; what vanishes or cannot be
    read while walking counts 0."""
    if os.path.islink(root) or not os.path.isdir(root):
        return _blocks(root)
    return sum(_blocks(os.path.join(folder, name)) for folder, _, names in os.walk(root) for name in names)


def _blocks(path: Path | str) -> int:
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_blocks * 512 if stat.S_ISREG(info.st_mode) else 0
