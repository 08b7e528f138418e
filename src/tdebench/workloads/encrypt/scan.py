"""The at-rest scan after a switch: is plaintext from before the switch left anywhere in the files?

Canaries are planted while the data are still plaintext (before the background starts); after the engine reports
everything encrypted, dirty pages are flushed and every file of the instance is searched for the canaries and for
the workload's known plaintext. A hit in a file the spec's scope covers is old plaintext the switch did not
rewrite (a redo or undo log, a freed page, the doublewrite buffer, an old file): a finding, recorded and shown,
never hidden. Hits in files outside the scope (e.g. the redo log under ``@tables``) are counted apart.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from tdebench.api.engine import Instance
from tdebench.verify.atrest import canary_names, scan_directory_for, statement_log_globs


def leftover_scan(instance: Instance, markers: list[str], known: tuple[str, ...]) -> dict[str, Any]:
    """Flush, scan, and sort the hits into the spec's scope and outside it (canaries by name, never by value)."""
    instance.flush_to_disk()
    names = canary_names(markers)
    canary, scanned = scan_directory_for(instance.data_dir, markers, list(known))
    plain = scanned if known else None
    outside = instance.files_outside_scope() + statement_log_globs(instance)

    def out_of_scope(path: str) -> bool:
        return any(fnmatch.fnmatch(path, pattern) for pattern in outside)

    files: dict[str, dict[str, int]] = {}
    for scan, label in ((canary, None), (plain, "known plaintext")):
        for f in scan.files if scan is not None else []:
            for value, n in f.hits.items():
                if n:
                    hits = files.setdefault(f.path, {})  # known plaintext: every value's hits add up
                    hits[label or names[value]] = hits.get(label or names[value], 0) + n
    in_scope = {p: h for p, h in files.items() if not out_of_scope(p)}
    found = {v for f in plain.files if not out_of_scope(f.path) for v, n in f.hits.items() if n} if plain else set()
    return {
        "canary_hits_in_scope": sum(n for p, h in in_scope.items() for k, n in h.items() if k.startswith("canary")),
        "known_plaintext_hits_in_scope": sum(h.get("known plaintext", 0) for h in in_scope.values()),
        "known_plaintext_found_in_scope": len(found),  # distinct values: which data the scan saw (by count only)
        "hits_outside_scope": sum(sum(h.values()) for p, h in files.items() if out_of_scope(p)),
        "files_with_hits_in_scope": sorted(in_scope),
        "files_with_hits": files,
        "outside_scope": outside,
        "files_scanned": len(canary.files),
        "bytes_scanned": sum(f.bytes for f in canary.files),
    }
