"""A MariaDB instance on filesystem encryption: an ext4 image (``fs:fscrypt`` and its plain twin,
:mod:`tdebench.engines.toolkit.fscrypt`) or a gocryptfs mount (``fs:gocryptfs*``,
:mod:`tdebench.engines.toolkit.fsencrypt`).

A mixin of :class:`tdebench.engines.mariadb.engine.MariadbInstance`, first among its bases: what the server says
about itself (:mod:`.status`) gains the filesystem's facts, and the instance's files are counted where they are on
disk. Under gocryptfs the datadir and tmpdir live inside the mount (``<root>/gocryptfs/plain/{data,tmp}``), which
admits the server's OS user only; the key file, my.cnf, the server log and the socket stay outside it, in the
instance directory, where tdebench (root) reads and writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.footprint import allocated_bytes
from tdebench.encryption import EncryptionSpec
from tdebench.engines.toolkit import fscrypt, fsencrypt
from tdebench.engines.toolkit.process import ServerProcess
from tdebench.errors import RunFailed


class MariadbFilesystems:
    """Status, verification, flushing, facts and sizes of an instance on an ext4 image or a gocryptfs mount."""

    # provided by MariadbInstance
    config: Any
    image: fscrypt.Ext4Image | None
    fs: fsencrypt.GocryptfsMount | None
    datadir: Path
    in_layer: bool
    _server: ServerProcess | None
    _path: Callable[..., Path]
    _connect: Callable[..., Any]
    _stop: Callable[[bool], None]

    def encryption_status(self) -> dict[str, Any]:
        status = fscrypt.with_image_status(super().encryption_status(),  # type: ignore[misc]
                                           self.image, self.config.spec, self.datadir)
        if self.fs is not None:
            mount = self.fs.status_of(self._server_datadir())
            status.update(filesystem=mount, enabled=mount["enabled"], mechanism=mount["mechanism"])
        return status

    def _server_datadir(self) -> str | None:
        """``@@datadir`` as the running server reports it (None when it is not running)."""
        if self._server is None or not self._server.running():
            return None
        conn = self._connect(timeout=5, use_database=False)
        try:
            cur = conn.cursor()
            cur.execute("SELECT @@GLOBAL.datadir")
            return str(cur.fetchone()[0])
        finally:
            conn.close()

    def check_encrypted(self, schema_tables: list[str], *args: Any, **kwargs: Any) -> None:
        spec: EncryptionSpec = self.config.spec
        if self.fs is not None:
            status = self.encryption_status()["filesystem"]
            if not status["enabled"]:
                raise RunFailed(f"{self.config.label}: the data directory is not on a gocryptfs mount "
                                f"(mount: {status['mount']}, datadir: {status['data_directory']})",
                                "check the gocryptfs log in the instance directory")
            return
        if self.image is None or not fscrypt.is_fscrypt_spec(spec):
            super().check_encrypted(schema_tables, *args, **kwargs)  # type: ignore[misc]
            return
        fs = self.image.status()
        if not fs["enabled"] or not self.datadir.is_relative_to(self.image.data_dir):
            raise RunFailed(f"{self.config.label}: the data directory is not in an unlocked fscrypt directory "
                            f"(policy v{fs['policy_version']}, key {fs['key_status']})",
                            "check that the ext4 image is mounted")

    def flush_to_disk(self) -> None:
        super().flush_to_disk()  # type: ignore[misc]
        if self.image is not None:  # what the filesystem holds, into the image's blocks
            self.image.sync()

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = super().settings()  # type: ignore[misc]
        if self.image is not None:
            out.update(self.image.facts())
        if self.fs is not None:
            out.update(self.fs.facts())
        return out

    def alive(self) -> bool:
        return (super().alive() and (self.image is None or self.image.mounted())  # type: ignore[misc]
                and (self.fs is None or self.fs.mounted()))

    def counters(self) -> dict[str, float]:
        """InnoDB's counters; under gocryptfs (the server encrypts nothing itself) its estimates: InnoDB's bytes
        written to data files and the redo log went through the mount and were encrypted there, the bytes it read
        from data files were decrypted (temporary files, Aria and the binlog are not counted)."""
        out: dict[str, float] = super().counters()  # type: ignore[misc]
        if self.fs is not None and self.in_layer and "bytes_written" in out:
            out.pop("bytes_decrypted", None)  # InnoDB's own (zero) give way to the estimates, as under fscrypt
            out.pop("bytes_encrypted", None)
            out.update(bytes_encrypted_estimate=out["bytes_written"] + out.get("log_bytes", 0),
                       bytes_decrypted_estimate=out.get("bytes_read", 0))
        return out

    def storage_bytes(self) -> int:
        """Bytes of the data directory (tables, logs, system tablespace), not keys or server logs; under gocryptfs
        what its cipher directory occupies (the mount admits the server's user only)."""
        root = self.fs.cipher_dir if self.fs is not None and self.in_layer else self.datadir
        return allocated_bytes(root)

    def server_pids(self) -> list[int]:
        """mariadbd, plus the gocryptfs daemon (it does the encrypting)."""
        own = self._server.tree_pids() if self._server is not None else []
        return own + (self.fs.pids() if self.fs is not None else [])

    def stop_server(self) -> None:
        """The server only: a gocryptfs mount stays mounted, so a physical restore writes inside it."""
        self._stop(False)

    def stop(self) -> None:
        """Shut the server down, then unmount gocryptfs (an ext4 image stays mounted until destroy)."""
        self._stop(False)
        if self.fs is not None:
            self.fs.unmount()
