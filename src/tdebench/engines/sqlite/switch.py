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

:class:`SqlcipherSwitcher` is what the instance's ``switcher()`` returns for ``sqlcipher:aes-256-cbc``; the instance
keeps ``_active``, the key the file is under now (None: plaintext), since every connection opens with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import OfflineSwitcher, Rekeying, Step
from tdebench.encryption import EncryptionSpec, SecretKey
from tdebench.errors import RunFailed

PLAIN_HEADER = b"SQLite format 3\x00"


class SqlcipherSwitcher(Rekeying, OfflineSwitcher[Any]):
    """The offline switch of a :class:`~tdebench.engines.sqlite.engine.SqliteInstance` (its ``path``, ``connect``,
    ``_settings``; ``_active`` the key the file is under now, None: plaintext; ``_key`` the target key)."""

    method = ("ATTACH ... KEY + SELECT sqlcipher_export(): a copy encrypted page by page replaces the file (no "
              "connection meanwhile)")
    rekey_method = "PRAGMA rekey: every page re-encrypted in place in one transaction (no connection meanwhile)"

    @classmethod
    def switches(cls, spec: EncryptionSpec) -> bool:
        return spec.mechanism == "sqlcipher"

    @property
    def path(self) -> Path:
        return Path(self.instance.path)

    def start_plain(self) -> dict[str, Any]:
        """The data are loaded plaintext (no ``PRAGMA key``) until :meth:`switch` encrypts them."""
        self.instance._active = None
        return {"start": "plaintext SQLite file; SQLCipher's key kept for the switch"}

    def _cipher_pragmas(self, schema: str) -> list[str]:
        settings = self.instance._settings
        return [f"PRAGMA {schema}.cipher_page_size = {int(settings['page_size'])}",
                f"PRAGMA {schema}.cipher_use_hmac = {settings['cipher_use_hmac'].upper()}"]

    def _export(self, key: SecretKey | None, step: Step) -> None:
        """sqlcipher_export into a new file next to the database, which then replaces it."""
        target = self.path.with_name(self.path.name + ".switch")
        for leftover in (target, Path(f"{target}-journal")):
            leftover.unlink(missing_ok=True)
        conn = self.instance.connect()
        try:
            if self.instance._settings["journal_mode"] == "wal":
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            step("export")
            literal = f"x'{key.hex()}'" if key is not None else ""
            where = str(target).replace("'", "''")
            conn.execute(f"ATTACH DATABASE '{where}' AS switch KEY \"{literal}\"")
            if key is not None:
                for pragma in self._cipher_pragmas("switch"):
                    conn.execute(pragma)
            else:
                conn.execute(f"PRAGMA switch.page_size = {int(self.instance._settings['page_size'])}")
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
        self.instance._active = key

    def switch(self, on: bool, step: Step) -> dict[str, Any]:
        self._export(self.instance._key if on else None, step)
        attach = "ATTACH ... KEY" if on else "ATTACH ... KEY ''"
        return {"method": f"{attach} + sqlcipher_export, then the new file replaces the old"}

    def rekey(self, step: Step) -> dict[str, Any]:
        if self.instance._active is None:
            raise RunFailed("PRAGMA rekey needs an encrypted database", "switch encryption on first")
        new = SecretKey.generate(256)
        step("rekey")
        conn = self.instance.connect()
        try:
            conn.execute(f"PRAGMA rekey = \"x'{new.hex()}'\"")
        finally:
            conn.close()
        self.instance._active = self.instance._key = new
        return {"method": "PRAGMA rekey (every page re-encrypted in place, one transaction)"}

    def progress(self, on: bool = True) -> SwitchProgress:
        """The file's own state: its header (plaintext ``SQLite format 3``, or SQLCipher's random salt) and that it
        opens with the key the instance holds (a wrong key fails ``SELECT count(*) FROM sqlite_master``)."""
        with open(self.path, "rb") as handle:
            encrypted = handle.read(16) != PLAIN_HEADER
        conn = self.instance.connect()
        try:
            objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            conn.close()
        done = encrypted == on and encrypted == (self.instance._active is not None)
        return SwitchProgress(done=done, in_target=int(done), total=1, pending=() if done else (self.path.name,),
                              detail={"schema_objects": objects})
