"""PostgreSQL switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it
(:mod:`tdebench.engines.toolkit.fslayer`): the cluster stopped, ``pgdata`` copied into the fscrypt directory on
the ext4 image or into the gocryptfs mount, the cluster started on the copy.

The instance is created as for any ``fs:`` twin, then ``start_plain`` moves ``pgdata`` out to
``<instance>/plaintext/pgdata``, where the plaintext cluster runs; the layer stays mounted, empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tdebench.api.switcher import Step
from tdebench.engines.toolkit.fslayer import PLAINTEXT, LayerSwitcher


class PostgresLayerSwitcher(LayerSwitcher):
    """The offline switch of a :class:`~tdebench.engines.postgres.instance.PostgresInstance` of an ``fs:`` spec."""

    moved_out = "pgdata"

    @property
    def root(self) -> Path:
        """The instance's directory: both places of the copy (the mounts inside it are not entered)."""
        return self.instance.home

    def _pgdata(self, in_layer: bool) -> Path:
        inst = self.instance
        if not in_layer:
            return inst.home / PLAINTEXT / "pgdata"
        return (inst.fs.plain_dir if inst.fs is not None else inst.image.data_dir) / "pgdata"

    def _move(self, into: bool, step: Step) -> dict[str, Any]:
        self._check_move(into)
        inst, target = self.instance, self._pgdata(into)
        self.mover.ensure_dir(target.parent)

        def point() -> None:
            inst.in_layer = into
            inst.pgcluster.pgdata = target

        def start() -> None:
            inst.pgcluster.start()
            inst.attach_memory_cap()

        facts = self.mover.move([inst.pgcluster.pgdata], [target], [True], step, inst.pgcluster.stop, point, start)
        return {**facts, "datadir": str(target)}
