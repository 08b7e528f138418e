"""SQLite's answers to the threat-model hooks of :class:`tdebench.api.engine.Instance` (docs/security.md).

A mixin of :class:`tdebench.engines.sqlite.engine.SqliteInstance` (uses ``_dir``, ``_key``, ``_settings`` and
``connect``). SQLite is a library: no server, server log, users or network. Its temporary files (sorts, temp
tables) go to the first usable of ``$SQLITE_TMPDIR``, ``$TMPDIR``, ``/var/tmp``, ``/usr/tmp``, ``/tmp``, are
unlinked as soon as they are opened, and exist only while the statement needs them: the spill probe reads
them through ``/proc/self/fd``. Whether they are written at all depends on the build's ``SQLITE_TEMP_STORE``
and ``PRAGMA temp_store`` (the ``temp_store`` setting).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tdebench.api.canary import CANARY_TABLE
from tdebench.engines.toolkit.exposure import files_holding, key_forms
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


class SqliteThreatProbes:
    """Threat-model hooks for one database file (see the module docstring)."""

    # provided by SqliteInstance
    _dir: Path
    _key: Any
    image: Any  # the ext4 image (fs:fscrypt and its plain twin) or None
    connect: Callable[[], Any]

    def disk_paths(self) -> list[Path]:
        """The instance's directory: the image file and its (unmounted-view) mount point for an ext4 image."""
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
        return [{"key": "SQLCipher raw key (AES-256)", "where": "memory of the tdebench process only; given with "
                 "PRAGMA key on every open", "on_disk": False, "beside_data": False, "mode": None,
                 "protected_by": "not stored",
                 "found_in_clear": [os.path.basename(p)
                                    for p in files_holding([self._dir], key_forms(self._key.hex()))]}]

    def statement_logs(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{NO_SERVER} and no server log"}

    def read_as_select_user(self) -> dict[str, Any]:
        return {"applicable": False, "reason": "SQLite has no users or privileges: whoever can open the file (with "
                                               "the key, for SQLCipher) reads all of it"}

    def transport_security(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{NO_SERVER}, so no client/server traffic to observe"}

    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any]]:
        """A sort of the canary rows × 20,000 with a 16-page cache, held open after its first row."""
        conn = self.connect()
        try:
            options = [str(r[0]) for r in conn.execute("PRAGMA compile_options").fetchall()]
            pragma = int(conn.execute("PRAGMA temp_store").fetchone()[0])
            setting = {"temp_store": str(getattr(self, "_settings", {}).get("temp_store", "default")),
                       "build": next((o for o in options if o.startswith("TEMP_STORE=")), "TEMP_STORE=1")}
            if temp_in_memory(options, pragma):
                yield {"in_memory": f"temporary data stays in memory here ({setting['build']}, temp_store="
                                    f"{setting['temp_store']}): no temporary file is written",
                       "settings": setting}
                return
            conn.execute("PRAGMA cache_size = 16")
            query = (f"WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {SPILL_COPIES}) "
                     f"SELECT c.marker || '-' || g.i AS v, hex(randomblob(20)) FROM {CANARY_TABLE} c, g "
                     "ORDER BY v DESC")
            cur = conn.execute(query)
            cur.fetchone()
            yield {"query": query.replace(CANARY_TABLE, "<canary table>"),
                   "settings": {**setting, "cache_size": "16 pages"}, "held_open": "cursor after its first row"}
        finally:
            conn.close()
