"""SQLCipher's own ways to encrypt an existing database, decrypt it and change its key; none works while the
database serves, so the ``encrypt`` workload runs them with its background stopped.

* **on**: ``ATTACH DATABASE '<new>' AS enc KEY "x'<hex>'"`` on a plaintext connection, ``SELECT
  sqlcipher_export('enc')`` (every table, index, view and trigger copied and encrypted page by page), then the new
  file replaces the old one (``os.replace``, same directory, so both exist until then: the peak extra space);
* **off**: the same with an empty key into a plaintext file;
* **rekey**: ``PRAGMA rekey = "x'<new hex>'"``: SQLCipher re-encrypts every page in place, in one transaction
  (the rollback journal, or the WAL, holds the pages meanwhile).

The replaced file's blocks are freed, not overwritten: the plaintext stays on the device until reused (a file scan
cannot see it; a scan of the raw device could).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.encryption import SecretKey
from tdebench.errors import RunFailed, UsageError

PLAIN_HEADER = b"SQLite format 3\x00"


class SqlcipherSwitch:
    """Mixin of :class:`~tdebench.engines.sqlite.engine.SqliteInstance`: ``_active`` is the key the file is under
    now (None: plaintext), ``_key`` the target key of the spec."""

    path: Path
    _active: SecretKey | None
    _key: SecretKey | None
    _settings: dict[str, str]

    def start_plain(self) -> dict[str, Any]:
        """The data are loaded plaintext (no ``PRAGMA key``) until :meth:`switch_offline` encrypts them."""
        if self._key is None:
            raise UsageError("only sqlcipher:aes-256-cbc can be switched on in an existing SQLite database",
                             "use --encryption sqlcipher:aes-256-cbc")
        self._active = None
        return {"start": "plaintext SQLite file; SQLCipher's key kept for the switch"}

    def _cipher_pragmas(self, schema: str) -> list[str]:
        return [f"PRAGMA {schema}.cipher_page_size = {int(self._settings['page_size'])}",
                f"PRAGMA {schema}.cipher_use_hmac = {self._settings['cipher_use_hmac'].upper()}"]

    def _export(self, key: SecretKey | None, step: Callable[[str], None]) -> None:
        """sqlcipher_export into a new file next to the database, which then replaces it."""
        target = self.path.with_name(self.path.name + ".switch")
        for leftover in (target, Path(f"{target}-journal")):
            leftover.unlink(missing_ok=True)
        conn = self.connect()  # type: ignore[attr-defined]
        try:
            if self._settings["journal_mode"] == "wal":
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            step("export")
            literal = f"x'{key.hex()}'" if key is not None else ""
            where = str(target).replace("'", "''")
            conn.execute(f"ATTACH DATABASE '{where}' AS switch KEY \"{literal}\"")
            if key is not None:
                for pragma in self._cipher_pragmas("switch"):
                    conn.execute(pragma)
            else:
                conn.execute(f"PRAGMA switch.page_size = {int(self._settings['page_size'])}")
            conn.execute("SELECT sqlcipher_export('switch')")
            conn.execute("DETACH DATABASE switch")
        finally:
            conn.close()
        step("swap")
        os.replace(target, self.path)
        for side in ("-wal", "-shm", "-journal"):  # the old file's; the new one starts without
            Path(f"{self.path}{side}").unlink(missing_ok=True)
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._active = key

    def switch_offline(self, action: str, step: Callable[[str], None]) -> dict[str, Any]:
        if self._key is None:
            raise UsageError("only sqlcipher:aes-256-cbc can be switched", "use --encryption sqlcipher:aes-256-cbc")
        if action == "on":
            self._export(self._key, step)
            return {"method": "ATTACH ... KEY + sqlcipher_export, then the new file replaces the old"}
        if action == "off":
            self._export(None, step)
            return {"method": "ATTACH ... KEY '' + sqlcipher_export, then the new file replaces the old"}
        if action == "rekey":
            if self._active is None:
                raise RunFailed("PRAGMA rekey needs an encrypted database", "switch encryption on first")
            new = SecretKey.generate(256)
            step("rekey")
            conn = self.connect()  # type: ignore[attr-defined]
            try:
                conn.execute(f"PRAGMA rekey = \"x'{new.hex()}'\"")
            finally:
                conn.close()
            self._active = self._key = new
            return {"method": "PRAGMA rekey (every page re-encrypted in place, one transaction)"}
        raise ValueError(f"unknown action {action!r}")

    def encryption_progress(self, on: bool = True) -> SwitchProgress:
        """The file's own state: its header (plaintext ``SQLite format 3``, or SQLCipher's random salt) and that it
        opens with the key the instance holds (a wrong key fails ``SELECT count(*) FROM sqlite_master``)."""
        with open(self.path, "rb") as handle:
            encrypted = handle.read(16) != PLAIN_HEADER
        conn = self.connect()  # type: ignore[attr-defined]
        try:
            objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            conn.close()
        done = encrypted == on and encrypted == (self._active is not None)
        return SwitchProgress(done=done, in_target=int(done), total=1, pending=() if done else (self.path.name,),
                              detail={"schema_objects": objects})
