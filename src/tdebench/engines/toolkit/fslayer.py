"""A server's data directory moved into (or out of) filesystem encryption with the server stopped: the offline switch
of ``fs:`` specs, as a DBA does it (the ``encrypt`` workload: docs/workloads/encrypt.md).

Neither fscrypt nor gocryptfs encrypts files that already exist: fscrypt sets its policy on an empty directory
only, and gocryptfs encrypts what is written through its mount. A plaintext server is therefore moved: stop it,
copy its data directory into the encrypted layer (a directory with an fscrypt policy on an ext4 image; a gocryptfs
mount), point it at the copy, start it. The old copy stays on disk, in the clear, until it is deleted, and deleting
frees its blocks without overwriting them. Engines keep their own layouts and start/stop; :class:`LayerMover`
does the copy, the bookkeeping of the old copy and its deletion, as the server's OS user (who alone may enter a
gocryptfs mount); :class:`LayerSwitcher` is the switcher an engine's instance returns for such a spec. There is no
re-keying of existing files (fscrypt sets a key on an empty directory only; gocryptfs ``-passwd`` re-wraps its
master key, not the data).
"""

from __future__ import annotations

import pwd
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import Copying, Step
from tdebench.encryption import EncryptionSpec
from tdebench.engines.toolkit import asuser, fscrypt, fsencrypt
from tdebench.errors import RunFailed

#: how an engine whose data directory can live in a layer switches it (:class:`LayerSwitcher`, for ``fs:`` specs)
LAYER_SWITCH = ("fs:* (offline): the server stopped, its data directory copied into the encrypted layer (cp -a, "
                "each file fsynced; an fscrypt directory on the ext4 image, a gocryptfs mount), the server pointed "
                "at the copy and started; the old plaintext copy is deleted afterwards")
#: where the data directory lives out of the layer, below the instance's top directory
PLAINTEXT = "plaintext"


def is_layer_spec(spec: EncryptionSpec) -> bool:
    """An fscrypt or gocryptfs spec: the data directory lives in an encrypted layer below the server."""
    return fscrypt.is_fscrypt_spec(spec) or fsencrypt.is_fs_spec(spec)


class LayerMover:
    """Copies directories between the plaintext place and the layer, and deletes what a copy left behind."""

    def __init__(self, user: pwd.struct_passwd | None) -> None:
        self.user = user
        self.old: list[Path] = []  # what the last move left in the old place

    def move(self, sources: list[Path], targets: list[Path], copy: list[bool], step: Callable[[str], None],
             stop: Callable[[], None], point: Callable[[], None], start: Callable[[], None]) -> dict[str, Any]:
        """``stop``, copy each source to its target (``copy`` False: an empty directory instead, e.g. a tmpdir:
        nothing in it outlives a clean shutdown), ``point`` the server at the targets, ``start``; ``step`` told of
        each stage. A failed copy removes the partial targets and starts the server on the intact sources."""
        self.remove_old()  # a copy a failed trial left behind
        copied = asuser.tree_bytes(self.user, sources[0])
        step("stop")
        stop()
        try:
            step("copy")
            for source, target, whole in zip(sources, targets, copy):
                if whole:
                    asuser.copy_into(self.user, source, target)
                else:
                    asuser.make_dir(self.user, target)
        except BaseException:
            for target in targets:
                asuser.remove_tree(self.user, target)
            start()
            raise
        point()
        step("start")
        start()
        self.old = list(sources)
        return {"old_copy": [str(p) for p in sources], "copied_bytes": copied, "copy_command": "cp -a"}

    def remove_old(self) -> dict[str, Any]:
        """Delete what the last copy left in the old place (its blocks are freed, not overwritten)."""
        old, self.old = self.old, []
        present = [p for p in old if asuser.exists(self.user, p)]
        removed = sum(asuser.tree_bytes(self.user, p, apparent=False) for p in present)
        for path in present:
            asuser.remove_tree(self.user, path)
        return {"removed_bytes": removed}

    def ensure_dir(self, path: Path) -> None:
        if not asuser.exists(self.user, path):
            asuser.make_dir(self.user, path)


class LayerSwitcher(Copying[Any]):
    """The offline switch of ``fs:`` specs for an engine's instance whose data directory can live in a layer: the
    instance keeps ``in_layer`` (where its data directory is now), ``user`` and ``config``; the engine's subclass
    moves its own directories (:meth:`_move`, with :attr:`mover`) and names the directory both places are below
    (:attr:`root`)."""

    method = LAYER_SWITCH
    whole_server = True  # the server's whole data directory is copied
    #: what start_plain moves out of the layer, in the engine's words (e.g. "pgdata")
    moved_out: str = "the data directory"

    def __init__(self, instance: Any) -> None:
        super().__init__(instance)
        #: copies the directories as the server's OS user, and keeps what the last copy left behind
        self.mover = LayerMover(instance.user)

    @classmethod
    def switches(cls, spec: EncryptionSpec) -> bool:
        return is_layer_spec(spec)

    @abstractmethod
    def _move(self, into: bool, step: Step) -> dict[str, Any]:
        """Stop, copy into the layer (``into``) or out of it, point the server there, start: the engine's."""

    def _check_move(self, into: bool) -> None:
        if self.instance.in_layer == into:
            raise RunFailed(f"{self.instance.config.label}: {self.moved_out} is {'in' if into else 'out of'} the "
                            "encrypted layer already", "switch the other way first")

    def start_plain(self) -> dict[str, Any]:
        """The data directory (the engine's own files, nothing loaded yet) moved out of the layer into
        ``plaintext/`` beside it; the layer stays mounted, empty."""
        self._move(False, lambda stage: None)
        self.remove_old_copy()
        return {"start": f"{self.moved_out} moved out of the encrypted layer into {PLAINTEXT}/ beside it; the layer "
                         "stays mounted, empty, until the switch copies the data in"}

    def switch(self, on: bool, step: Step) -> dict[str, Any]:
        """Copy the data directory into the layer (``on``) or back out, the server stopped meanwhile."""
        return self._move(on, step)

    def progress(self, on: bool = True) -> SwitchProgress:
        """Whether the running server's data directory is in the unlocked layer."""
        inside = bool(self.instance.encryption_status()["enabled"])
        return SwitchProgress(done=inside == on, in_target=int(inside == on), total=1,
                              detail={"data_directory_in_layer": int(inside)})

    def remove_old_copy(self) -> dict[str, Any]:
        return self.mover.remove_old()
