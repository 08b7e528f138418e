"""MariaDB switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it
(:mod:`tdebench.engines.toolkit.fslayer`).

The instance is created as for any ``fs:`` twin (the fscrypt directory on the ext4 image, the gocryptfs mount),
then ``start_plain`` moves ``data/`` and ``tmp/`` out to ``<instance>/plaintext/``, where the plaintext server
runs; the layer stays mounted, empty. ``switch`` copies them in ("on") or back out ("off");
``remove_old_copy`` deletes what the copy left behind. The instance's top directory (:attr:`MariadbLayerSwitcher.root`)
holds both places: the sparse image file or the gocryptfs cipher directory, and ``plaintext/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tdebench.api.switcher import Step
from tdebench.engines.toolkit.fslayer import LayerSwitcher


class MariadbLayerSwitcher(LayerSwitcher):
    """The offline switch of a :class:`~tdebench.engines.mariadb.engine.MariadbInstance` of an ``fs:`` spec."""

    moved_out = "data/ and tmp/"

    @property
    def root(self) -> Path:
        """The instance's top directory: both places of the copy (the mounts inside it are not entered)."""
        return self.instance.top_dir

    def _move(self, into: bool, step: Step) -> dict[str, Any]:
        """data/ copied, tmp/ made empty in the other place; my.cnf pointed there."""
        self._check_move(into)
        inst = self.instance
        parent = inst._data_parent(into)
        self.mover.ensure_dir(parent)

        def point() -> None:
            inst.in_layer = into
            inst._path("my.cnf").write_text(inst._render_cnf())

        facts = self.mover.move([inst.datadir, inst.tmpdir], [parent / "data", parent / "tmp"], [True, False], step,
                                lambda: inst._stop(False), point, inst.start)
        return {**facts, "datadir": str(inst.datadir)}
