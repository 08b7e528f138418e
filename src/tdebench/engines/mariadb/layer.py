"""MariaDB switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it.

Neither fscrypt nor gocryptfs encrypts files that already exist: fscrypt sets its policy on an empty directory
only, and gocryptfs encrypts what is written through its mount. A plaintext server is therefore moved: stop it,
copy its data directory into the encrypted layer (a directory with an fscrypt policy on an ext4 filesystem with the
``encrypt`` feature; a gocryptfs mount), point ``datadir`` and ``tmpdir`` at the copy, start it. The old copy stays
on disk, in the clear, until it is deleted, and deleting frees its blocks without overwriting them.

Layout: the instance is created as for any ``fs:`` twin (the fscrypt directory on the ext4 image, the gocryptfs
mount), then :meth:`MariadbLayer.start_plain` moves ``data/`` and ``tmp/`` out to ``<instance>/plaintext/``, where
the plaintext server runs; the layer stays mounted, empty. :meth:`MariadbLayer.switch_offline` copies them in
("on") or back out ("off"); :meth:`MariadbLayer.remove_old_copy` deletes what the copy left behind. Everything
below the instance's top directory (:attr:`MariadbLayer.switch_root`) is both places at once: the sparse image file
or the gocryptfs cipher directory, and ``plaintext/``.
"""

from __future__ import annotations

import pwd
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.encryption import EncryptionSpec
from tdebench.engines.toolkit import asuser, fscrypt, fsencrypt
from tdebench.errors import RunFailed, UsageError

LAYER_SWITCH = ("fs:* (offline): the server stopped, its data directory copied into the encrypted layer (cp -a, "
                "each file fsynced; an fscrypt directory on the ext4 image, a gocryptfs mount), datadir and tmpdir "
                "pointed at the copy, the server started; the old plaintext copy is deleted afterwards")
PLAINTEXT = "plaintext"


def is_layer_spec(spec: EncryptionSpec) -> bool:
    """An fscrypt or gocryptfs spec: the data directory lives in an encrypted layer below the server."""
    return fscrypt.is_fscrypt_spec(spec) or fsencrypt.is_fs_spec(spec)


class MariadbLayer:
    """Mixin of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`: the offline switch of ``fs:`` specs."""

    # provided by MariadbInstance
    config: Any
    user: pwd.struct_passwd | None
    home: Path | None
    in_layer: bool
    datadir: Path
    tmpdir: Path
    _old_copy: list[Path] = []
    _path: Callable[..., Path]
    _stop: Callable[[bool], None]
    _render_cnf: Callable[[], str]
    start: Callable[[], None]
    encryption_status: Callable[[], dict[str, Any]]

    @property
    def plaintext_place(self) -> Path:
        """Where data/ and tmp/ are while the server runs outside the encrypted layer."""
        return (self.home or self._path()) / PLAINTEXT

    @property
    def switch_root(self) -> Path:
        """The instance's top directory: both places of the copy (the mounts inside it are not entered)."""
        return self.home or self._path()

    def _layer(self) -> bool:
        return is_layer_spec(self.config.spec)

    def start_plain(self) -> dict[str, Any]:
        """For an ``fs:`` spec: data/ and tmp/ (the system tables, nothing loaded yet) moved out of the layer."""
        if not self._layer():
            return super().start_plain()  # type: ignore[misc]
        self._move(False, lambda stage: None)
        self.remove_old_copy()
        return {"start": f"data/ and tmp/ moved out of the encrypted layer into {PLAINTEXT}/ beside it; the layer "
                         "stays mounted, empty, until the switch copies the data in"}

    def switch_offline(self, action: str, step: Callable[[str], None]) -> dict[str, Any]:
        """Copy the data directory into the layer ("on") or back out ("off"), the server stopped meanwhile."""
        if not self._layer():
            return super().switch_offline(action, step)  # type: ignore[misc]
        if action not in ("on", "off"):
            raise UsageError(f"{self.config.spec} has no re-keying of existing files (fscrypt sets a key on an empty "
                             "directory only; gocryptfs -passwd re-wraps its master key, not the data)", "use rekey=no")
        return self._move(action == "on", step)

    def encryption_progress(self, on: bool = True) -> SwitchProgress:
        """For an ``fs:`` spec: whether the running server's data directory is in the unlocked layer."""
        if not self._layer():
            return super().encryption_progress(on)  # type: ignore[misc]
        inside = bool(self.encryption_status()["enabled"])
        return SwitchProgress(done=inside == on, in_target=int(inside == on), total=1,
                              detail={"data_directory_in_layer": int(inside)})

    def remove_old_copy(self) -> dict[str, Any]:
        """Delete what the last copy left in the old place (its blocks are freed, not overwritten)."""
        old, self._old_copy = self._old_copy, []
        removed = sum(asuser.tree_bytes(self.user, p, apparent=False) for p in old if asuser.exists(self.user, p))
        for path in old:
            asuser.remove_tree(self.user, path)
        return {"removed_bytes": removed}

    def _move(self, into: bool, step: Callable[[str], None]) -> dict[str, Any]:
        """Stop, copy data/ (tmp/ is made empty: nothing in it outlives a clean shutdown), repoint, start."""
        if self.in_layer == into:
            raise RunFailed(f"{self.config.label}: the data directory is {'in' if into else 'out of'} the encrypted "
                            "layer already", "switch the other way first")
        sources = [self.datadir, self.tmpdir]
        copied = asuser.tree_bytes(self.user, sources[0])
        step("stop")
        self._stop(False)
        self.in_layer = into
        if not into and not asuser.exists(self.user, self.plaintext_place):
            asuser.make_dir(self.user, self.plaintext_place)
        try:
            step("copy")
            asuser.copy_into(self.user, sources[0], self.datadir)
            asuser.make_dir(self.user, self.tmpdir)
        except BaseException:
            for path in (self.datadir, self.tmpdir):
                asuser.remove_tree(self.user, path)
            self.in_layer = not into  # the server goes back to the intact old copy
            self._path("my.cnf").write_text(self._render_cnf())
            self.start()
            raise
        self._path("my.cnf").write_text(self._render_cnf())
        step("start")
        self.start()
        self._old_copy = sources
        return {"old_copy": [str(p) for p in sources], "copied_bytes": copied, "copy_command": "cp -a",
                "datadir": str(self.datadir)}
