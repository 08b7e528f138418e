"""MariaDB switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it
(:mod:`tdebench.engines.toolkit.fslayer`).

The instance is created as for any ``fs:`` twin (the fscrypt directory on the ext4 image, the gocryptfs mount),
then :meth:`MariadbLayer.start_plain` moves ``data/`` and ``tmp/`` out to ``<instance>/plaintext/``, where the
plaintext server runs; the layer stays mounted, empty. :meth:`MariadbLayer.switch_offline` copies them in ("on")
or back out ("off"); :meth:`MariadbLayer.remove_old_copy` deletes what the copy left behind. The instance's top
directory (:attr:`MariadbLayer.switch_root`) holds both places: the sparse image file or the gocryptfs cipher
directory, and ``plaintext/``.
"""

from __future__ import annotations

import pwd
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.engines.toolkit.fslayer import FS_REKEY_REFUSAL, PLAINTEXT, LayerMover, is_layer_spec
from tdebench.errors import RunFailed, UsageError


class MariadbLayer:
    """Mixin of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`: the offline switch of ``fs:`` specs."""

    # provided by MariadbInstance
    config: Any
    user: pwd.struct_passwd | None
    home: Path | None
    in_layer: bool
    datadir: Path
    tmpdir: Path
    _path: Callable[..., Path]
    _stop: Callable[[bool], None]
    _render_cnf: Callable[[], str]
    _data_parent: Callable[[bool | None], Path]
    start: Callable[[], None]
    encryption_status: Callable[[], dict[str, Any]]
    _mover: LayerMover | None = None

    @property
    def plaintext_place(self) -> Path:
        """Where data/ and tmp/ are while the server runs outside the encrypted layer."""
        return (self.home or self._path()) / PLAINTEXT

    @property
    def switch_root(self) -> Path:
        """The instance's top directory: both places of the copy (the mounts inside it are not entered)."""
        return self.home or self._path()

    @property
    def mover(self) -> LayerMover:
        if self._mover is None:
            self._mover = LayerMover(self.user)
        return self._mover

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
            raise UsageError(f"{self.config.spec} {FS_REKEY_REFUSAL}", "use rekey=no")
        return self._move(action == "on", step)

    def encryption_progress(self, on: bool = True) -> SwitchProgress:
        """For an ``fs:`` spec: whether the running server's data directory is in the unlocked layer."""
        if not self._layer():
            return super().encryption_progress(on)  # type: ignore[misc]
        inside = bool(self.encryption_status()["enabled"])
        return SwitchProgress(done=inside == on, in_target=int(inside == on), total=1,
                              detail={"data_directory_in_layer": int(inside)})

    def remove_old_copy(self) -> dict[str, Any]:
        return self.mover.remove_old()

    def _move(self, into: bool, step: Callable[[str], None]) -> dict[str, Any]:
        """data/ copied, tmp/ made empty in the other place; my.cnf pointed there."""
        if self.in_layer == into:
            raise RunFailed(f"{self.config.label}: the data directory is {'in' if into else 'out of'} the encrypted "
                            "layer already", "switch the other way first")
        parent = self._data_parent(into)
        self.mover.ensure_dir(parent)

        def point() -> None:
            self.in_layer = into
            self._path("my.cnf").write_text(self._render_cnf())

        facts = self.mover.move([self.datadir, self.tmpdir], [parent / "data", parent / "tmp"], [True, False], step,
                                lambda: self._stop(False), point, self.start)
        return {**facts, "datadir": str(self.datadir)}
