"""Is a backup encrypted? Scan its bytes for the canary markers and the data's known plaintext.

The canary markers are the ones at-rest verification planted (read back from ``tdebench_canary``), so every
backup of every config holds them unless it is encrypted; the known plaintext (e.g. ``Customer#000000001``)
is part of the loaded data itself. Compressed backups are scanned decompressed: compression hides plaintext
from a naive grep but protects nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.engine import CANARY_TABLE, Instance
from tdebench.verify.atrest import count_in_file, scan_directory


@dataclass
class BackupScan:
    """Hits in one backup."""

    marker_hits: int = 0
    known_plaintext_hits: int = 0
    files_scanned: int = 0
    bytes_scanned: int = 0
    files_with_hits: list[str] = field(default_factory=list)

    @property
    def encrypted(self) -> bool:
        return self.marker_hits + self.known_plaintext_hits == 0

    def to_json(self) -> dict[str, Any]:
        return {"encrypted": self.encrypted, "marker_hits": self.marker_hits,
                "known_plaintext_hits": self.known_plaintext_hits, "files_scanned": self.files_scanned,
                "bytes_scanned": self.bytes_scanned, "files_with_hits": self.files_with_hits[:20]}


def canary_markers(instance: Instance) -> list[str]:
    """The markers planted by at-rest verification (empty if there are none)."""
    conn = instance.connect()
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT marker FROM {CANARY_TABLE} ORDER BY id")
        markers = [str(r[0]) for r in cur.fetchall()]
        conn.commit()
        return markers
    except Exception:  # noqa: BLE001 - no canary table: the scan uses the known plaintext only
        conn.rollback()
        return []
    finally:
        conn.close()


def _scan_one(path: Path, needles: list[str]) -> dict[str, dict[str, int]]:
    """file name (relative) -> hits per needle."""
    if path.is_dir():
        result = scan_directory(path, needles)
        return {f"{path.name}/{f.path}": dict(f.hits, __bytes__=f.bytes) for f in result.files}
    hits = count_in_file(path, [n.encode() for n in needles])
    return {path.name: {**{k: v for k, v in hits.items() if v}, "__bytes__": path.stat().st_size}}


def scan_backup(paths: list[Path], markers: list[str], known: tuple[str, ...]) -> BackupScan:
    """Count canary and known-plaintext occurrences over every file of the backup."""
    scan = BackupScan()
    needles = list(markers) + [k for k in known if k not in markers]
    if not needles:
        return scan
    for path in paths:
        for name, hits in _scan_one(path, needles).items():
            scan.files_scanned += 1
            scan.bytes_scanned += hits.pop("__bytes__", 0)
            m = sum(v for k, v in hits.items() if k in markers)
            p = sum(v for k, v in hits.items() if k not in markers)
            scan.marker_hits += m
            scan.known_plaintext_hits += p
            if m or p:
                scan.files_with_hits.append(name)
    return scan
