"""The at-rest scan after a switch: is plaintext from before the switch left anywhere in the files?

Canaries are planted while the data are still plaintext (before the background starts); after the engine reports
everything encrypted, dirty pages are flushed and every file of the instance is searched for the canaries and for
the workload's known plaintext. A hit in a file the spec's scope covers is old plaintext the switch did not
rewrite (a redo or undo log, a freed page, the doublewrite buffer, an old file): a finding, recorded and shown,
never hidden. Hits in files outside the scope (e.g. the redo log under ``@tables``) are counted apart.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

from tdebench.api.engine import Instance
from tdebench.verify.atrest import canary_names, scan_directory_for, statement_log_globs


def leftover_scan(instance: Instance, markers: list[str], known: tuple[str, ...]) -> dict[str, Any]:
    """Flush, scan, and sort the hits into the spec's scope and outside it (canaries by name, never by value)."""
    instance.flush_to_disk()
    outside = instance.files_outside_scope() + statement_log_globs(instance)
    return {**_findings([instance.data_dir], markers, known, outside), "outside_scope": outside}


def old_copy_scan(paths: list[Path], markers: list[str], known: tuple[str, ...]) -> dict[str, Any]:
    """The old place of a switch that copies the data into an encrypted layer, before it is deleted: every hit is
    plaintext the switch left on disk (a finding until the copy is wiped, and then in its freed blocks)."""
    return {**_findings(paths, markers, known, []), "old_copy": [p.name for p in paths]}


def _findings(roots: list[Path], markers: list[str], known: tuple[str, ...], outside: list[str]) -> dict[str, Any]:
    """The canaries and known plaintext in the files below ``roots`` (paths relative to the root, prefixed with its
    name when there are several), in scope unless a path matches a glob of ``outside``."""
    names = canary_names(markers)
    files: dict[str, dict[str, int]] = {}
    found: set[str] = set()
    scanned = scanned_bytes = 0

    def out_of_scope(path: str) -> bool:
        return any(fnmatch.fnmatch(path, pattern) for pattern in outside)

    for root in roots:
        canary, plain = scan_directory_for(root, markers, list(known))
        scanned, scanned_bytes = scanned + len(canary.files), scanned_bytes + sum(f.bytes for f in canary.files)
        for scan, label in ((canary, None), (plain if known else None, "known plaintext")):
            for f in scan.files if scan is not None else []:
                path = f.path if len(roots) == 1 else f"{root.name}/{f.path}"
                for value, n in f.hits.items():
                    if n:
                        hits = files.setdefault(path, {})  # known plaintext: every value's hits add up
                        hits[label or names[value]] = hits.get(label or names[value], 0) + n
                        if label and not out_of_scope(path):
                            found.add(value)
    in_scope = {p: h for p, h in files.items() if not out_of_scope(p)}
    return {
        "canary_hits_in_scope": sum(n for p, h in in_scope.items() for k, n in h.items() if k.startswith("canary")),
        "known_plaintext_hits_in_scope": sum(h.get("known plaintext", 0) for h in in_scope.values()),
        "known_plaintext_found_in_scope": len(found),  # distinct values: which data the scan saw (by count only)
        "hits_outside_scope": sum(sum(h.values()) for p, h in files.items() if out_of_scope(p)),
        "files_with_hits_in_scope": sorted(in_scope),
        "files_with_hits": files,
        "files_scanned": scanned,
        "bytes_scanned": scanned_bytes,
    }
