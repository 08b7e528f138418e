"""The file scans of the threat-model checks (:mod:`tdebench.verify.threat_checks`): needles counted per file, files
named relative to the instance's paths, the at-rest scan's files read back, and the temporary files a server holds
open or writes in its temp locations."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tdebench.api.threat_probes import ThreatProbes
from tdebench.engines.toolkit.exposure import files_on_disk
from tdebench.verify.atrest import FileScan, count_in_file
from tdebench.verify.threat_rows import Needles, fmt_bytes, join_words

TOP_FILES = 10


@dataclass
class Scan:
    """A set of scanned files."""

    files: list[FileScan]

    @property
    def hits(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.files:
            for name, n in f.hits.items():
                out[name] = out.get(name, 0) + n
        return dict(sorted(out.items()))

    @property
    def total(self) -> int:
        return sum(f.total_hits for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def evidence(self) -> dict[str, Any]:
        with_hits = [f.path for f in self.files if f.total_hits]
        return {"files_scanned": len(self.files), "bytes_scanned": self.bytes, "hits": self.hits,
                "files_with_hits": with_hits[:TOP_FILES], "more_files_with_hits": max(0, len(with_hits) - TOP_FILES)}

    def text(self, what: str) -> str:
        """``3 files of X (12.0 MiB) scanned: canary-1 ×2 in a, b`` or ``...: no plaintext``."""
        head = f"{len(self.files)} file(s) of {what} ({fmt_bytes(self.bytes)}) scanned: "
        if not self.total:
            return head + "no canary or known plaintext"
        where = [f.path for f in self.files if f.total_hits]
        more = f" and {len(where) - 3} more file(s)" if len(where) > 3 else ""
        return head + f"{hits_text(self.hits)} in {', '.join(where[:3]) if more else join_words(where)}{more}"


def hits_text(hits: dict[str, int]) -> str:
    return ", ".join(f"{name} ×{n}" for name, n in hits.items()) or "no hits"


def matches(path: str, globs: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, g) for g in globs)


# scanning ---------------------------------------------------------------------------------------------
def display(path: Path, roots: list[Path]) -> str:
    """``path`` relative to the first root holding it, else absolute."""
    real = Path(os.path.realpath(path))
    for root in roots:
        base = Path(os.path.realpath(root))
        if real == base:
            return real.name
        if real.is_relative_to(base):
            return str(real.relative_to(base))
    return str(real)


def scanned_size(path: Path) -> int:
    """Bytes on disk (a sparse image counts its blocks), or a fresh file's apparent size until its blocks are
    allocated; a /proc fd link is followed."""
    info = os.stat(path)
    return info.st_blocks * 512 or info.st_size


def scan_paths(paths: list[Path], needles: Needles, roots: list[Path], label: str | None = None) -> Scan:
    """Count every needle in each file (files only; unreadable ones skipped)."""
    values = [v.encode() for v in needles.values()]
    files = []
    for path in paths:
        try:
            counts = count_in_file(path, values) if values else {}
            size = scanned_size(path)
        except (OSError, ValueError):
            continue
        files.append(FileScan(label or display(path, roots), size, needles.name_counts(counts)))
    return Scan(files)


def at_rest_files(at_rest: dict[str, Any]) -> list[FileScan]:
    """The at-rest scan's files (canary hits by name, known plaintext merged in by path)."""
    files = {f["path"]: FileScan(f["path"], int(f.get("bytes", 0)), dict(f.get("hits") or {}))
             for f in at_rest.get("files") or [] if isinstance(f, dict) and "path" in f}
    for f in at_rest.get("known_plaintext") or []:
        if not isinstance(f, dict) or f.get("path") not in files:
            continue
        for text, n in (f.get("hits") or {}).items():
            if n:
                files[f["path"]].hits[f"known:{text}"] = int(n)
    return list(files.values())


def open_temp_files(pids: list[int], locations: list[Path]) -> tuple[list[tuple[Path, str]], int]:
    """(readable /proc/<pid>/fd paths with their target, count of unreadable ones) of the files the processes
    hold open below ``locations`` (deleted ones included: their bytes are still on the disk)."""
    roots = [os.path.realpath(p) for p in locations]
    found: dict[str, Path] = {}
    unreadable = 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            link = f"/proc/{pid}/fd/{fd}"
            try:
                target = os.readlink(link)
            except OSError:
                continue
            clean = target[:-len(" (deleted)")] if target.endswith(" (deleted)") else target
            if not any(clean == r or clean.startswith(r + "/") for r in roots) or target in found:
                continue
            if os.access(link, os.R_OK) and os.path.isfile(link):
                found[target] = Path(link)
            else:
                unreadable += 1
    return [(p, t) for t, p in found.items()], unreadable


def inside(path: Path, roots: list[Path]) -> bool:
    real = os.path.realpath(path)
    return any(real == os.path.realpath(r) or real.startswith(os.path.realpath(r) + "/") for r in roots)


def temp_scan(probes: ThreatProbes, needles: Needles, since: float | None) -> tuple[Scan, int]:
    """Open temp files of the server plus files in its own temp locations (changed since ``since``, or all)."""
    roots = probes.disk_paths()
    locations = probes.temp_locations() or []
    opened, unreadable = open_temp_files(probes.instance.server_pids(), locations)
    scan = Scan([])
    for link, target in opened:
        deleted = target.endswith(" (deleted)")
        name = display(Path(target.replace(" (deleted)", "")), roots) + (" (deleted, still open)" if deleted
                                                                         else " (open)")
        scan.files += scan_paths([link], needles, roots, label=name).files
    seen = {t.replace(" (deleted)", "") for _, t in opened}
    # only the instance's own locations are listed (never a shared /tmp); the data_dir itself (a gocryptfs
    # cipher directory) only for files changed during the probe: its full scan is the data-directory row's
    own = [p for p in locations if inside(p, roots)
           and (since is not None or os.path.realpath(p) != os.path.realpath(probes.instance.data_dir))]
    for path in files_on_disk(own):
        if str(path) in seen:
            continue
        try:
            if since is not None and path.stat().st_mtime < since:
                continue
        except OSError:
            continue
        scan.files += scan_paths([path], needles, roots).files
    return scan, unreadable


