"""MariaDB switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it
(:mod:`tdebench.engines.toolkit.fslayer`).

The instance is created as for any ``fs:`` twin (the fscrypt directory on the ext4 image, the gocryptfs mount),
then ``start_plain`` moves ``data/`` and ``tmp/`` out to ``<instance>/plaintext/``, where the plaintext server
runs; the layer stays mounted, empty. ``switch_offline`` copies them in ("on") or back out ("off");
``remove_old_copy`` deletes what the copy left behind. The instance's top directory (:attr:`MariadbLayer.switch_root`)
holds both places: the sparse image file or the gocryptfs cipher directory, and ``plaintext/``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit.fslayer import PLAINTEXT, LayerSwitching


class MariadbLayer(LayerSwitching):
    """Mixin of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`: the offline switch of ``fs:`` specs."""

    moved_out = "data/ and tmp/"
    # provided by MariadbInstance
    home: Path | None
    datadir: Path
    tmpdir: Path
    _path: Callable[..., Path]
    _stop: Callable[[bool], None]
    _render_cnf: Callable[[], str]
    _data_parent: Callable[[bool | None], Path]
    start: Callable[[], None]

    @property
    def plaintext_place(self) -> Path:
        """Where data/ and tmp/ are while the server runs outside the encrypted layer."""
        return (self.home or self._path()) / PLAINTEXT

    @property
    def switch_root(self) -> Path:
        """For an ``fs:`` spec the instance's top directory: both places of the copy (the mounts inside it are not
        entered); else the data directory."""
        return (self.home or self._path()) if self._layer() else self.data_dir  # type: ignore[attr-defined]

    def _move(self, into: bool, step: Callable[[str], None]) -> dict[str, Any]:
        """data/ copied, tmp/ made empty in the other place; my.cnf pointed there."""
        self._check_move(into)
        parent = self._data_parent(into)
        self.mover.ensure_dir(parent)

        def point() -> None:
            self.in_layer = into
            self._path("my.cnf").write_text(self._render_cnf())

        facts = self.mover.move([self.datadir, self.tmpdir], [parent / "data", parent / "tmp"], [True, False], step,
                                lambda: self._stop(False), point, self.start)
        return {**facts, "datadir": str(self.datadir)}
