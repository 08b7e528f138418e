"""PostgreSQL switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it
(:mod:`tdebench.engines.toolkit.fslayer`): the cluster stopped, ``pgdata`` copied into the fscrypt directory on
the ext4 image or into the gocryptfs mount, the cluster started on the copy.

The instance is created as for any ``fs:`` twin, then ``start_plain`` moves ``pgdata`` out to
``<instance>/plaintext/pgdata``, where the plaintext cluster runs; the layer stays mounted, empty.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit.fslayer import PLAINTEXT, LayerSwitching


class PostgresLayer(LayerSwitching):
    """Mixin of :class:`~tdebench.engines.postgres.instance.PostgresInstance`: the offline switch of ``fs:``."""

    moved_out = "pgdata"
    in_layer = True  # pgdata inside the fs: spec's layer (start_plain moves it out)
    # provided by PostgresInstance
    home: Path
    pgcluster: Any
    fs: Any
    image: Any
    attach_memory_cap: Callable[[], None]

    @property
    def switch_root(self) -> Path:
        """For an ``fs:`` spec the instance's directory: both places of the copy (the mounts inside it are not
        entered); else the data directory."""
        return self.home if self._layer() else self.data_dir  # type: ignore[attr-defined]

    def _pgdata(self, in_layer: bool) -> Path:
        if not in_layer:
            return self.home / PLAINTEXT / "pgdata"
        return (self.fs.plain_dir if self.fs is not None else self.image.data_dir) / "pgdata"

    def _move(self, into: bool, step: Callable[[str], None]) -> dict[str, Any]:
        self._check_move(into)
        target = self._pgdata(into)
        self.mover.ensure_dir(target.parent)

        def point() -> None:
            self.in_layer = into
            self.pgcluster.pgdata = target

        def start() -> None:
            self.pgcluster.start()
            self.attach_memory_cap()

        facts = self.mover.move([self.pgcluster.pgdata], [target], [True], step, self.pgcluster.stop, point, start)
        return {**facts, "datadir": str(target)}
