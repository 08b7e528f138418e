"""DuckDB's own answers to the threat-model probes (:class:`tdebench.api.threat_probes.ThreatProbes`,
docs/security.md): what :meth:`tdebench.engines.duckdb.engine.DuckdbInstance.threats` returns.

:class:`~tdebench.engines.toolkit.filedb.FileThreats` answers what every library without a server answers (no
server log, users or network; the paths; the key's row); DuckDB's spill files go to ``temp_directory``, set to
``tmp/`` inside the instance's directory, so the at-rest scan reads them; the spill probe holds a sort open under a
small memory limit so that they exist while the scan runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.canary import CANARY_TABLE
from tdebench.engines.toolkit.filedb import FileThreats

SPILL_COPIES = 400_000
SPILL_MEMORY = "48MB"


def spill_files(directory: Path) -> list[Path]:
    """Files DuckDB keeps in its temporary directory now."""
    return [p for p in directory.rglob("*") if p.is_file()] if directory.is_dir() else []


class DuckdbThreats(FileThreats):
    """Threat-model probes for one DuckDB database (see the module docstring) of a
    :class:`~tdebench.engines.duckdb.engine.DuckdbInstance` (its ``temp_dir``, ``encrypted``, ``image``, key,
    DuckDB settings and ``connect_raw``)."""

    library = "DuckDB"
    file_parts = {"redo": ["*.wal"], "temp": ["tmp/*"]}

    def temp_locations(self) -> list[Path]:
        image = self.instance.image
        return [image.image_dir] if image is not None else [self.instance.temp_dir]

    def library_keys(self) -> list[dict[str, Any]]:
        key = self.instance._key
        if key is None:
            return []
        return [self.key_row(key, "DuckDB ENCRYPTION_KEY (256 random bits as hex, from which DuckDB derives "
                             "its AES key)", "ATTACH on every start")]

    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any]]:
        """A sort of the canary rows × 400,000 (by a random column) under a 48 MB memory limit, held open after its
        first row."""
        conn = self.instance.connect_raw()
        before = self._probe_settings(conn)
        # the markers ride along as payload: DuckDB's sort keys are normalized, so a sorted marker is not
        # stored as its text
        query = (f"SELECT c.marker, g.i, md5(random()::VARCHAR) AS pad FROM {CANARY_TABLE} c, "
                 f"range({SPILL_COPIES}) g(i) ORDER BY pad")
        try:
            conn.execute(f"SET memory_limit = '{SPILL_MEMORY}'")
            conn.execute("SET preserve_insertion_order = false")
            conn.execute(query)
            conn.fetchone()
            found = spill_files(self.instance.temp_dir)
            yield {"query": query.replace(CANARY_TABLE, "<canary table>"),
                   "settings": {"memory_limit": SPILL_MEMORY, "temp_directory": "tmp/ in the instance directory",
                                "temp_file_encryption": self.instance.encrypted},
                   "spill_files": len(found), "spill_bytes": sum(p.stat().st_size for p in found),
                   "held_open": "result after its first row"}
        finally:
            try:
                for name, value in before.items():
                    conn.execute(f"SET {name} = '{value}'")
            finally:
                conn.close()

    def _probe_settings(self, conn: Any) -> dict[str, str]:
        """The values to put back after the probe. Both settings are global in DuckDB (a SET on one connection
        changes every connection). Left off, preserve_insertion_order makes each single-row INSERT of a transaction
        (TPC-H's RF1) take a row group of its own, about 250 KiB, and RF1 at SF 1 ran out of memory under every
        limit tried (duckdb/duckdb#19958). ``RESET memory_limit`` changes the setting but not the buffer manager's
        limit (DuckDB 1.4.4), so the limit is SET: the instance's own value when it has one (exact), else DuckDB's
        default as current_setting() shows it (rounded to 0.1 GiB)."""
        current = conn.execute("SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order')"
                               ).fetchone()
        own = self.instance._settings.get("memory_limit", "default")
        return {"memory_limit": own if own.lower() != "default" else str(current[0]),
                "preserve_insertion_order": "true" if current[1] else "false"}
