"""At-rest verification: plant canary rows, force them to disk, scan every file for plaintext.

The plain twin must show hits (proof that the scanner works); an encrypted twin must show none in
the files its scope covers. Works for any engine through the :class:`Instance` interface.
"""

from __future__ import annotations

import fnmatch
import mmap
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.footprint import allocated_bytes
from tdebench.api.engine import Instance, threat_probes
from tdebench.engines.toolkit.exposure import data_windows


@dataclass
class FileScan:
    """Hits per marker in one file."""

    path: str
    bytes: int
    hits: dict[str, int] = field(default_factory=dict)

    @property
    def total_hits(self) -> int:
        return sum(self.hits.values())


@dataclass
class ScanResult:
    """The scan of one instance's data directory."""

    markers: list[str]
    files: list[FileScan]

    @property
    def marker_hits(self) -> int:
        return sum(f.total_hits for f in self.files)

    @property
    def files_with_hits(self) -> list[str]:
        return [f.path for f in self.files if f.total_hits]

    def to_json(self) -> dict[str, Any]:
        return {
            "markers_searched": len(self.markers),
            "files_scanned": len(self.files),
            "bytes_scanned": sum(f.bytes for f in self.files),
            "marker_hits": self.marker_hits,
            "files": [asdict(f) for f in self.files],
        }


def new_markers(count: int = 4) -> list[str]:
    """Random marker strings no database contains by chance."""
    return [f"TDEBENCH-CANARY-{secrets.token_hex(12)}" for _ in range(count)]


def count_in_file(path: Path, needles: list[bytes]) -> dict[str, int]:
    """Occurrences of each needle in the file (non-overlapping, as ``bytes.count``), read once in overlapping
    chunks; holes of a sparse file are skipped."""
    counts = {n.decode(): 0 for n in needles}
    size = path.stat().st_size
    if size == 0 or not needles:
        return counts
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        for window, head in data_windows(view, handle.fileno(), size, needles):
            previous = window[:head]  # the previous chunk's tail: what lies wholly in it was counted there
            for needle in needles:
                # counted in C: a plain twin's known plaintext occurs hundreds of thousands of times, and a
                # find() loop in Python took seconds per data directory
                counts[needle.decode()] += window.count(needle) - previous.count(needle)
    return counts


def scan_directory(root: Path, markers: list[str]) -> ScanResult:
    """Scan every regular file under ``root`` for every marker."""
    return scan_directory_for(root, markers)[0]


def scan_directory_for(root: Path, *marker_sets: list[str]) -> list[ScanResult]:
    """One :class:`ScanResult` per marker set, every file under ``root`` read once for all of them."""
    needles = list(dict.fromkeys(m.encode() for markers in marker_sets for m in markers))
    per_set: list[list[FileScan]] = [[] for _ in marker_sets]
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        try:
            hits = count_in_file(path, needles)
            size = allocated_bytes(path)  # on disk: a sparse image counts the blocks it holds
        except (OSError, ValueError):
            continue
        for markers, files in zip(marker_sets, per_set):
            if markers:  # an empty set scans nothing, so lists no file
                files.append(FileScan(str(path.relative_to(root)), size,
                                      {m: hits[m] for m in markers if hits[m]}))
    return [ScanResult(markers, files) for markers, files in zip(marker_sets, per_set)]


def canary_names(markers: list[str]) -> dict[str, str]:
    """marker value -> the name results show instead (``canary-1`` ...): values are never written."""
    return {m: f"canary-{i}" for i, m in enumerate(markers, start=1)}


def statement_log_globs(instance: Instance) -> list[str]:
    """Statement-log files inside :attr:`Instance.data_dir` (relative): plaintext by design under every scope,
    judged in the threat model's own row, not by the at-rest verdict."""
    try:
        facts = threat_probes(instance).statement_logs() or {}
    except Exception:  # noqa: BLE001 - an engine that cannot say keeps the plain verdict
        return []
    root = instance.data_dir.resolve()
    out = []
    for path in facts.get("files", []) if facts.get("enabled") else []:
        resolved = Path(path).resolve()
        if resolved.is_relative_to(root):
            out.append(str(resolved.relative_to(root)))
    return out


def verify_at_rest(instance: Instance, markers: list[str] | None = None,
                   known_plaintext: tuple[str, ...] = ()) -> dict[str, Any]:
    """Plant canaries, flush, scan the data directory for them and for ``known_plaintext`` (values the
    workload's data hold); return the verdict for verification.json (canaries by name, never by value)."""
    markers = markers or new_markers()
    names = canary_names(markers)
    instance.plant_canaries(markers)
    instance.flush_to_disk()
    canary, known = scan_directory_for(instance.data_dir, markers, list(known_plaintext))
    encrypted = not instance.config.spec.is_plain
    hits = canary.marker_hits + known.marker_hits
    outside = instance.files_outside_scope() + statement_log_globs(instance)
    in_scope = sum(f.total_hits for f in canary.files + known.files
                   if not any(fnmatch.fnmatch(f.path, pattern) for pattern in outside))
    return {
        "expected_encrypted": encrypted,
        "encrypted_on_disk": in_scope == 0,
        "passed": (in_scope == 0) if encrypted else (hits > 0),
        "outside_scope": outside,
        "outside_scope_hits": hits - in_scope,
        "markers": list(names.values()),
        "marker_hits": canary.marker_hits,
        "known_plaintext_hits": known.marker_hits,
        "files_scanned": len(canary.files),
        "bytes_scanned": sum(f.bytes for f in canary.files),
        "files_with_hits": sorted(set(canary.files_with_hits) | set(known.files_with_hits)),
        "files": [{"path": f.path, "bytes": f.bytes, "hits": {names[m]: n for m, n in f.hits.items()}}
                  for f in canary.files],
        "known_plaintext": known.to_json()["files"],
    }
