"""PostgreSQL switched offline into filesystem encryption (``fs:`` specs), the way a DBA does it
(:mod:`tdebench.engines.toolkit.fslayer`): the cluster stopped, ``pgdata`` copied into the fscrypt directory on
the ext4 image or into the gocryptfs mount, the cluster started on the copy.

The instance is created as for any ``fs:`` twin, then :meth:`PostgresLayer.start_plain` moves ``pgdata`` out to
``<instance>/plaintext/pgdata``, where the plaintext cluster runs; the layer stays mounted, empty.
"""

from __future__ import annotations

import pwd
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.engines.toolkit.fslayer import FS_REKEY_REFUSAL, PLAINTEXT, LayerMover, is_layer_spec
from tdebench.errors import RunFailed, UsageError


class PostgresLayer:
    """Mixin of :class:`~tdebench.engines.postgres.instance.PostgresInstance`: the offline switch of ``fs:``."""

    # provided by PostgresInstance
    config: Any
    user: pwd.struct_passwd | None
    home: Path
    cluster: Any
    fs: Any
    image: Any
    encryption_status: Callable[[], dict[str, Any]]
    attach_memory_cap: Callable[[], None]
    in_layer: bool = True  # pgdata inside the fs: spec's layer (start_plain moves it out)
    _mover: LayerMover | None = None

    @property
    def switch_root(self) -> Path:
        """The instance's directory: both places of the copy (the mounts inside it are not entered)."""
        return self.home

    @property
    def mover(self) -> LayerMover:
        if self._mover is None:
            self._mover = LayerMover(self.user)
        return self._mover

    def _layer(self) -> bool:
        return is_layer_spec(self.config.spec)

    def _pgdata(self, in_layer: bool) -> Path:
        if not in_layer:
            return self.home / PLAINTEXT / "pgdata"
        return (self.fs.plain_dir if self.fs is not None else self.image.data_dir) / "pgdata"

    def start_plain(self) -> dict[str, Any]:
        """For an ``fs:`` spec: pgdata (initdb's, nothing loaded yet) moved out of the layer."""
        if not self._layer():
            return super().start_plain()  # type: ignore[misc]
        self._move(False, lambda stage: None)
        self.remove_old_copy()
        return {"start": f"pgdata moved out of the encrypted layer into {PLAINTEXT}/ beside it; the layer stays "
                         "mounted, empty, until the switch copies the data in"}

    def switch_offline(self, action: str, step: Callable[[str], None]) -> dict[str, Any]:
        """Copy pgdata into the layer ("on") or back out ("off"), the cluster stopped meanwhile."""
        if not self._layer():
            return super().switch_offline(action, step)  # type: ignore[misc]
        if action not in ("on", "off"):
            raise UsageError(f"{self.config.spec} {FS_REKEY_REFUSAL}", "use rekey=no")
        return self._move(action == "on", step)

    def encryption_progress(self, on: bool = True) -> SwitchProgress:
        """For an ``fs:`` spec: whether the running cluster's data directory is in the unlocked layer."""
        if not self._layer():
            return super().encryption_progress(on)  # type: ignore[misc]
        inside = bool(self.encryption_status()["enabled"])
        return SwitchProgress(done=inside == on, in_target=int(inside == on), total=1,
                              detail={"data_directory_in_layer": int(inside)})

    def remove_old_copy(self) -> dict[str, Any]:
        return self.mover.remove_old()

    def _move(self, into: bool, step: Callable[[str], None]) -> dict[str, Any]:
        if self.in_layer == into:
            raise RunFailed(f"{self.config.label}: pgdata is {'in' if into else 'out of'} the encrypted layer already",
                            "switch the other way first")
        target = self._pgdata(into)
        self.mover.ensure_dir(target.parent)

        def point() -> None:
            self.in_layer = into
            self.cluster.pgdata = target

        def start() -> None:
            self.cluster.start()
            self.attach_memory_cap()

        facts = self.mover.move([self.cluster.pgdata], [target], [True], step, self.cluster.stop, point, start)
        return {**facts, "datadir": str(target)}
