"""Where a MariaDB instance's keys come from (a mixin of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`):
the file key plugin's key file and its file key (on tmpfs for one start), or the run's key server through the
hashicorp_key_management plugin, whose token only the server process's environment holds; rotation by key version
(:mod:`tdebench.engines.mariadb.rotation`) for ``tde:`` twins on a key server."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.keys import KeyAccess, KeyRotation
from tdebench.engines.mariadb import keyplugins
from tdebench.engines.mariadb.keys import KeyMaterial, remove_tree, transient_dir
from tdebench.engines.mariadb.rotation import MariadbRotation
from tdebench.engines.toolkit.process import chown_tree


class MariadbKeySource:
    """The key plugin's options, the file key's life, the key server's access and rotation."""

    config: Any
    user: Any
    root: Path | None
    key_access: KeyAccess | None
    key_settings: dict[str, str]
    _keys: KeyMaterial | None
    _transient: Path | None
    _rotation: MariadbRotation | None
    encrypted: bool
    _path: Any

    def take_keys(self, access: KeyAccess) -> None:
        """``tde:``: the key plugin reads the keys from the key server (no key file); filesystems: their key."""
        super().take_keys(access)
        if self.config.spec.mechanism == "tde":
            self._keys = None

    # paths -------------------------------------------------------------------------------
    def key_rotation(self) -> KeyRotation | None:
        """Rotation by key version (:mod:`tdebench.engines.mariadb.rotation`): ``tde:`` twins on a key server."""
        if self.key_access is None or not self.encrypted:
            return None
        if self._rotation is None:
            self._rotation = MariadbRotation(self)
        return self._rotation

    @property
    def key_plugin(self) -> str:
        """The key management plugin a ``tde:`` twin loads."""
        return keyplugins.VAULT_PLUGIN if self.key_access is not None else keyplugins.FILE_PLUGIN

    def _key_plugin_options(self, placeholders: bool = False) -> dict[str, str]:
        """The key plugin's my.cnf lines (``placeholders``: no paths or addresses, for the reported settings)."""
        if self.key_access is not None:
            return keyplugins.vault_options(None if placeholders else self.key_access, self.key_settings)
        if placeholders:
            return keyplugins.file_options(self.config.spec, Path("keys.enc"), Path("filekey"))
        return keyplugins.file_options(self.config.spec, self._path("keys", "keys.enc"), self._filekey_placeholder())

    def _filekey_placeholder(self) -> Path:
        # the file key's real location is a fresh tmpfs directory per start, linked here (see _secrets)
        return self._path("keys", "filekey")

    def _secrets(self) -> Path:
        """Write the file key (and nothing else) for one start-up; linked from keys/filekey."""
        remove_tree(self._transient)
        self._transient = transient_dir(self._path("keys"))
        chown_tree(self._transient, self.user)
        if self._keys is not None:
            target = self._keys.write_filekey(self._transient)
            chown_tree(self._transient, self.user)
            link = self._filekey_placeholder()
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(target)
            if self.user is not None:
                os.lchown(link, self.user.pw_uid, self.user.pw_gid)
        return self._transient

    @contextlib.contextmanager
    def key_material(self) -> Iterator[None]:
        """The file key readable at ``keys/filekey`` (0600, tmpfs) while the block runs, for tools that load the
        key plugin themselves (``mariadb-backup --backup/--prepare``); removed afterwards. No-op when plain."""
        if self._keys is None:
            yield
            return
        self._secrets()
        try:
            yield
        finally:
            self._forget_secrets()

    def _forget_secrets(self) -> None:
        link = self._filekey_placeholder() if self.root is not None else None
        if link is not None and (link.is_symlink() or link.exists()):
            link.unlink()
        remove_tree(self._transient)
        self._transient = None

    def _server_keys(self) -> KeyAccess | None:
        """The key server the server process itself asks (``tde:`` twins with a key source other than file)."""
        return self.key_access if self.encrypted else None
