"""One database file in a private 0700 directory, plain or on a loop-mounted ext4 image: what the embedded engines
(a library in tdebench's process, no server) share, so that each keeps only its library's part.

:class:`FileEngine` is mixed into an :class:`~tdebench.api.engine.Engine`: the ``fs:fscrypt`` specs, the
``storage`` setting (``dir`` or ``ext4-loop``, which every twin of an fscrypt plan gets) and the image's disk
overhead. :class:`FileDatabase` is mixed into its :class:`~tdebench.api.engine.Instance` (before ``Instance``):
call :meth:`FileDatabase.place_file` in ``__init__``; it then answers the lifecycle (``start``, ``alive``,
``stop``, ``destroy``), the paths (``data_dir``, ``snapshot_dir``, ``storage_bytes``) and, with
:class:`FileThreats` (what its ``threats()`` returns; subclass it for the library's keys), the threat-model probes
every such engine answers alike (no server, no users, no network; the image's key). Layout::

    <workdir>/<label>/                 the instance's home (0700)
        <file>                         the database file, when it is a plain directory
        fs/image/ext4.img, fs/mnt/data/<file>   on an ext4 image (:mod:`tdebench.engines.toolkit.fscrypt`)
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tdebench.api.footprint import allocated_bytes
from tdebench.api.engine import Config
from tdebench.api.keys import BY_TDEBENCH, KeyAccess, KeyNeed, KeyPath
from tdebench.api.threat_probes import ThreatProbes
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey
from tdebench.engines.toolkit import fscrypt
from tdebench.engines.toolkit.exposure import files_holding, key_forms
from tdebench.engines.toolkit.keyrows import server_key_row, unattended
from tdebench.errors import RunFailed


class FileEngine:
    """Engine hooks of an engine whose instance is one file that may sit on an ext4 image."""

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        """fs:fscrypt's path (the engine adds its library's own specs)."""
        return fscrypt.key_path(spec)

    @staticmethod
    def library_key_path(bits: int, what: str, given: str) -> KeyPath:
        """A library's key fetched by tdebench from the key server at every open, then ``given`` to it."""
        return KeyPath((KeyNeed(1, bits, what),), BY_TDEBENCH, "tdebench fetches the key from the key server at "
                       f"every open of the database and gives it {given}")

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        if fscrypt.is_fscrypt_spec(spec):
            fscrypt.check_available(spec)

    def plan_settings(self, specs: Sequence[EncryptionSpec]) -> dict[str, str]:
        return fscrypt.plan_settings(list(specs))

    @staticmethod
    def file_specs() -> list[EncryptionSpec]:
        """The filesystem specs such an engine supports (for ``supported_specs``)."""
        return fscrypt.fs_specs()

    @staticmethod
    def library_settings(settings: dict[str, str]) -> dict[str, str]:
        """``settings`` without ``storage``, once that is valid (and ext4 images can be had here when asked for):
        what is left for the engine's own validation."""
        fscrypt.validate_storage(settings)
        if fscrypt.on_loop_image(PLAIN, settings):
            fscrypt.check_available()
        return {k: v for k, v in settings.items() if k != fscrypt.STORAGE_KEY}

    @staticmethod
    def image_overhead(spec: EncryptionSpec, settings: dict[str, str]) -> int:
        """Bytes an ext4 image adds to the engine's footprint (0 in a plain directory)."""
        return fscrypt.EXT4_OVERHEAD if fscrypt.on_loop_image(spec, settings) else 0


class FileDatabase:
    """Instance hooks of one database file (see the module docstring); the engine's instance sets the rest."""

    config: Config
    image: fscrypt.Ext4Image | None
    path: Path
    key_access: KeyAccess | None

    def place_file(self, config: Config, workdir: Path, filename: str) -> None:
        """Where the database file lives: ``<workdir>/<label>/<filename>``, or inside an ext4 image there."""
        self._home = workdir / config.label
        self.image = (fscrypt.Ext4Image(config.spec, self._home / "fs")
                      if fscrypt.on_loop_image(config.spec, config.settings) else None)
        self._dir = self.image.data_dir if self.image is not None else self._home
        self.path = self._dir / filename

    # keys ------------------------------------------------------------------------------------
    def take_keys(self, access: KeyAccess) -> None:
        """The library's key, or the ext4 image's (fs:fscrypt), from the key server."""
        self.key_access = access
        if self.image is not None:
            self.image.key_access = access

    def open_key(self, local: SecretKey | None) -> SecretKey | None:
        """The key to give the library at this open: ``local`` (the engine's own, in memory; None: no key), or the
        key server's, fetched now (one request) when the config keeps its keys on one."""
        if local is None or self.key_access is None:
            return local
        return self.key_access.fetch(1)

    # paths -----------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        """What is on disk: the database's directory, or the ext4 image holding it (scanned as raw blocks)."""
        return self.image.image_dir if self.image is not None else self._dir

    @property
    def snapshot_dir(self) -> Path:
        """The database's directory (on an ext4 image: as mounted)."""
        return self._dir

    def storage_bytes(self) -> int:
        """Bytes of the database's files (on an ext4 image: as the mount shows them, like the plain twin's)."""
        return allocated_bytes(self._dir)

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """The 0700 directory (mounting the ext4 image first, when there is one)."""
        self._home.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.image is not None:
            self.image.mount()
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)

    def alive(self) -> bool:
        return self.image is None or self.image.mounted()

    def stop(self) -> None:
        """Nothing runs between connections (an ext4 image stays mounted until :meth:`destroy`)."""

    def destroy(self) -> None:
        """Stop, unmount the image and, unless the config keeps it, delete the instance's home."""
        try:
            self.stop()
        finally:
            if self.image is not None:
                self.image.destroy(keep=self.config.keep)
            if not self.config.keep:
                shutil.rmtree(self._home, ignore_errors=True)

    # the ext4 image's part of flush, settings and status ------------------------------------------
    def sync_image(self) -> None:
        """What the filesystem holds, into the image's blocks (end of ``flush_to_disk``)."""
        if self.image is not None:
            self.image.sync()

    def image_facts(self) -> dict[str, Any]:
        """The image's settings-style facts ({} in a plain directory)."""
        return self.image.facts() if self.image is not None else {}

    def add_filesystem_status(self, status: dict[str, Any]) -> dict[str, Any]:
        """``status`` with the image's ``filesystem`` facts; for fscrypt, ``enabled`` says whether the database
        is in the unlocked encrypted directory."""
        return fscrypt.with_image_status(status, self.image, self.config.spec, self.path)

    def check_filesystem(self, status: dict[str, Any]) -> None:
        """RunFailed when an fscrypt config's database is not in an unlocked fscrypt directory."""
        if fscrypt.is_fscrypt_spec(self.config.spec) and not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the database is not in an unlocked fscrypt directory",
                            "check that the ext4 image is mounted")

    def threats(self) -> "FileThreats":
        """The threat-model probes of a library without a server (an engine with a key returns its subclass)."""
        return FileThreats(self)


class FileThreats(ThreatProbes[FileDatabase]):
    """The threat-model probes of one database file (docs/security.md): what every library without a server
    answers alike, the paths and the ext4 image's key; an engine sets :attr:`library` and :attr:`file_parts` and
    returns its library's keys from :meth:`library_keys`."""

    #: the library's name in the threat model's answers ("SQLite is a library ...")
    library = "the library"
    #: globs of the database's files by part (``redo``, ``temp``) when the file is in a plain directory
    file_parts: dict[str, list[str]] = {}

    def disk_paths(self) -> list[Path]:
        """The database's directory: the image file and its (unmounted-view) mount point for an ext4 image."""
        image = self.instance.image
        return [image.root] if image is not None else [self.instance.snapshot_dir]

    def live_paths(self) -> list[Path]:
        """The database's directory (for fs:fscrypt: inside the unlocked mount)."""
        return [self.instance.snapshot_dir]

    def data_dir_parts(self) -> dict[str, list[str]] | None:
        if self.instance.image is not None:
            return None  # journal, WAL and spill files are blocks of one image file
        return dict(self.file_parts)

    def key_storage(self) -> list[dict[str, Any]] | None:
        """The fscrypt key's row on an encrypted image, else the library's keys (:meth:`library_keys`)."""
        image = self.instance.image
        if image is not None and image.encrypted:
            return [fscrypt.fscrypt_key_row(self.instance.key_access)]
        return self.library_keys()

    def library_keys(self) -> list[dict[str, Any]] | None:
        """The library's own keys as :meth:`key_row` writes them (``[]``: the twin has none); None: not known
        (an engine with a key overrides this)."""
        return None

    def key_row(self, key: SecretKey, what: str, given: str) -> dict[str, Any]:
        """A key that lives in tdebench's memory only (or on the key server), ``given`` to the library on every
        open, with the files of the database's directory that hold it in clear (its hex or raw bytes)."""
        running = "the memory of the process that opens the database (tdebench's here: the application's)"
        access, directory = self.instance.key_access, self.instance.snapshot_dir
        if access is not None:
            key = access.fetch(1)
            found = [os.path.basename(p) for p in files_holding([directory], key_forms(key.hex()))]
            return server_key_row(access, what, f"fetched by tdebench at every open, given with {given}",
                                  running + ", with the token", found)
        return {"key": what, "source": "file", "where": f"memory of the tdebench process only; given with {given}",
                "on_disk": False, "beside_data": False, "mode": None, "protected_by": "not stored",
                "found_in_clear": [os.path.basename(p) for p in files_holding([directory], key_forms(key.hex()))],
                "unattended": unattended("the key (in the application's configuration or a file it reads)",
                                         "tdebench keeps it in its memory only"),
                "running": {"where": running}}

    def statement_logs(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{self._no_server()} and no server log"}

    def read_as_select_user(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{self.library} has no users or privileges: whoever can open the "
                                               "file (with the key, when encrypted) reads all of it"}

    def transport_security(self) -> dict[str, Any]:
        return {"applicable": False, "reason": f"{self._no_server()}, so no client/server traffic to observe"}

    def _no_server(self) -> str:
        return f"{self.library} is a library inside the client process: there is no server"


__all__ = ["FileDatabase", "FileEngine", "FileThreats"]
