"""Counting needles in files that only another OS user may read: a gocryptfs mount admits the server's user alone,
so the live-host row reads it through a tar stream packed as that user (:func:`tdebench.engines.toolkit.asuser.tar_stream`).
The needles never leave this process: the user's tar only hands over the files' bytes."""

from __future__ import annotations

import pwd
import tarfile
from collections.abc import Callable
from pathlib import Path

from tdebench.engines.toolkit.asuser import tar_stream

_CHUNK = 1 << 22


def count_stream(read: Callable[[int], bytes], needles: list[bytes]) -> tuple[int, dict[str, int]]:
    """(bytes read, occurrences of each needle) in what ``read`` returns until it is empty; a match across two
    chunks counts once (each window keeps only the last ``len(needle) - 1`` bytes of the one before)."""
    counts = {n.decode(): 0 for n in needles}
    tails = {n: b"" for n in needles}
    total = 0
    while chunk := read(_CHUNK):
        total += len(chunk)
        for needle in needles:
            window = tails[needle] + chunk
            counts[needle.decode()] += window.count(needle)
            tails[needle] = window[-(len(needle) - 1):] if len(needle) > 1 else b""
    return total, counts


def scan_tree_as(user: pwd.struct_passwd | None, root: Path,
                 needles: list[bytes]) -> list[tuple[str, int, dict[str, int]]]:
    """(path relative to ``root``, bytes, occurrences per needle) of every regular file under ``root``, read as
    ``user``."""
    out: list[tuple[str, int, dict[str, int]]] = []
    with tar_stream(user, root) as stream, tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            if not member.isreg():
                continue
            handle = archive.extractfile(member)
            if handle is None:
                continue
            size, counts = count_stream(handle.read, needles)
            out.append((member.name.removeprefix("./"), size, counts))
    return out
