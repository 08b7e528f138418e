"""SQLite3MC's answers to the threat-model hooks of :class:`tdebench.api.engine.Instance` (docs/security.md).

A mixin of :class:`tdebench.engines.sqlite3mc.engine.McInstance`, as the sqlite engine's: no server, server log,
users or network. Temporary files (sorts, temp tables) go to the first usable of ``$SQLITE_TMPDIR``, ``$TMPDIR``,
``/var/tmp``, ``/usr/tmp``, ``/tmp``, unlinked once opened; this build keeps them in memory unless ``temp_store``
is ``file`` (``SQLITE_TEMP_STORE=2``). Where one is written, SQLite3MC encrypts it with the database's cipher
(tests/engines/test_sqlite3mc.py reads the open spill file of each twin).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.canary import CANARY_TABLE
from tdebench.engines.toolkit.fscrypt import fscrypt_key_row

SPILL_COPIES = 20_000
NO_SERVER = "SQLite is a library inside the client process: there is no server"


def sqlite_temp_dir() -> Path:
    """Where SQLite (unix VFS) puts temporary files: the first writable of its candidate directories."""
    for candidate in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return Path(candidate)
    return Path(".")


def temp_in_memory(compile_options: list[str], pragma: int) -> bool:
    """True when temporary data stays in memory: SQLITE_TEMP_STORE (0-3) combined with PRAGMA temp_store (0-2)."""
    build = next((int(o.split("=")[1]) for o in compile_options if o.startswith("TEMP_STORE=")), 1)
    return build == 3 or (build == 2 and pragma != 1) or (build == 1 and pragma == 2)


class McThreatProbes:
    """Threat-model hooks for one database file (see the module docstring)."""

    _dir: Path  # provided by McInstance
    _key: Any
    _settings: dict[str, str]
    image: Any  # the ext4 image (fs:fscrypt and its plain twin) or None

    def disk_paths(self) -> list[Path]:
        return [self.image.root] if self.image is not None else [self._dir]

    def live_paths(self) -> list[Path]:
        """The database's directory (for fs:fscrypt: inside the unlocked mount)."""
        return [self._dir]

    def data_dir_parts(self) -> dict[str, list[str]] | None:
        if self.image is not None:
            return None  # the journal and the database are blocks of one image file
        return {"redo": ["*-journal", "*-wal"]}

    def temp_locations(self) -> list[Path]:
        return [sqlite_temp_dir()]

    def key_storage(self) -> list[dict[str, Any]]:
        if self.image is not None and self.image.encrypted:
            return [fscrypt_key_row()]
        if self._key is None:
            return []
        needles = [self._key.hex().encode(), self._key.raw()]
        found = [p.name for p in self._dir.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]
        return [{"key": f"SQLite3MC raw key ({self._key.bits} bits)", "where": "memory of the tdebench process only; "
                 "given with PRAGMA key on every open", "on_disk": False, "beside_data": False, "mode": None,
                 "protected_by": "not stored", "found_in_clear": found}]

    def statement_logs(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{NO_SERVER} and no server log"}

    def read_as_select_user(self) -> dict[str, Any]:
        return {"applicable": False, "reason": "SQLite has no users or privileges: whoever can open the file (with "
                                               "the key, when encrypted) reads all of it"}

    def transport_security(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{NO_SERVER}, so no client/server traffic to observe"}

    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any]]:
        """A sort of the canary rows × 20,000 with a 16-page cache, held open after its first row."""
        conn = self.connect()  # type: ignore[attr-defined]
        try:
            raw = conn.raw
            options = [str(r[0]) for r in raw.execute("PRAGMA compile_options").fetchall()]
            pragma = int(raw.execute("PRAGMA temp_store").fetchall()[0][0])
            setting = {"temp_store": self._settings.get("temp_store", "default"),
                       "build": next((o for o in options if o.startswith("TEMP_STORE=")), "TEMP_STORE=1")}
            if temp_in_memory(options, pragma):
                yield {"in_memory": f"temporary data stays in memory here ({setting['build']}, temp_store="
                                    f"{setting['temp_store']}): no temporary file is written", "settings": setting}
                return
            raw.execute("PRAGMA cache_size = 16").fetchall()
            query = (f"WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {SPILL_COPIES}) "
                     f"SELECT c.marker || '-' || g.i AS v, hex(randomblob(20)) FROM {CANARY_TABLE} c, g "
                     "ORDER BY v DESC")
            cur = conn.cursor().execute(query)
            cur.fetchone()
            yield {"query": query.replace(CANARY_TABLE, "<canary table>"),
                   "settings": {**setting, "cache_size": "16 pages"}, "held_open": "cursor after its first row"}
        finally:
            conn.close()
