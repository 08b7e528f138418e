"""Switching encryption of existing data in place as a capability object: what the ``encrypt`` workload drives
(docs/workloads/encrypt.md).

An instance whose engine can bring its plaintext data to the instance's encrypted spec (and back) returns a
:class:`Switcher` from :meth:`tdebench.api.engine.Instance.switcher` (None: it cannot, the default), and its engine
names the classes once in :attr:`tdebench.api.engine.Engine.switcher_types`, one per kind of spec (the first whose
:meth:`Switcher.switches` holds). Everything the runner and the workload check before any work follows from that
class (:meth:`Switcher.describe`, :meth:`tdebench.api.engine.Engine.switch_method`): what a switcher can do is what
its class implements, so a description cannot promise a method the class lacks (an abstract method left out makes
the class impossible to instantiate).

* :class:`OnlineSwitcher`: the engine's own switch while the database serves (:meth:`OnlineSwitcher.switch`),
  followed by :meth:`Switcher.progress`; with :class:`Restarting` the restart it needs before (and after the way
  back);
* :class:`OfflineSwitcher`: the engine's own method with no workload connected (:meth:`OfflineSwitcher.switch`),
  with :class:`Copying` when it copies the data into another place and leaves the old copy behind;
* :class:`Rekeying`: re-encryption of the encrypted data under a new key (while serving for an online switcher,
  with no workload connected for an offline one).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from tdebench.api.switch import SwitchMethod, SwitchProgress
from tdebench.encryption import EncryptionSpec

#: the engine's own instance class that a switcher belongs to
InstanceT = TypeVar("InstanceT")
#: ``step(name)``: called as each of a method's own stages begins (e.g. "export", "swap"; "vacuum"), so that the
#: caller can time them and measure the files between them
Step = Callable[[str], None]


class Switcher(ABC, Generic[InstanceT]):
    """How one instance (of the engine's own class ``InstanceT``) switches its existing data between plaintext and
    its encrypted spec."""

    #: the method in the engine's own words (:attr:`SwitchMethod.method`)
    method: ClassVar[str]
    #: the switch covers every database of the server (:meth:`~tdebench.api.server.ServerAccess.connect_to` reaches
    #: another one, created on first use): the ``encrypt`` workload can then load TPC-H beside its TPC-C background
    whole_server: ClassVar[bool] = False

    def __init__(self, instance: InstanceT) -> None:
        #: the instance whose data this switches (the engine's own class)
        self.instance = instance

    @classmethod
    @abstractmethod
    def switches(cls, spec: EncryptionSpec) -> bool:
        """Whether this class brings plaintext data to ``spec`` (an encrypted spec of its engine)."""

    @classmethod
    def describe(cls) -> SwitchMethod:
        """How this class switches, as the workload's checks and the manifest read it: from what it implements."""
        rekeys = issubclass(cls, Rekeying)
        online = issubclass(cls, OnlineSwitcher)
        return SwitchMethod(online, cls.method, cls.restart_reason if issubclass(cls, Restarting) else "",
                            cls.rekey_method if rekeys else "", rekeys and online,
                            cls.whole_server, issubclass(cls, Copying))

    @abstractmethod
    def start_plain(self) -> dict[str, Any]:
        """Make the (empty, started) instance the plaintext server a DBA switches from, although its spec is
        encrypted: the data it will hold start unencrypted, the keys at hand (a switch that needs a restart loads
        them then: :class:`Restarting`); facts for the manifest."""

    @abstractmethod
    def progress(self, on: bool = True) -> SwitchProgress:
        """How far the data stand towards encrypted (``on``) or plaintext, as the engine reports it."""

    @property
    def root(self) -> Path:
        """The directory whose disk an offline switch changes (both places of one that copies); default: the
        instance's data directory."""
        return self.instance.data_dir  # type: ignore[attr-defined]


class OnlineSwitcher(Switcher[InstanceT]):
    """A switch the engine runs while the database serves."""

    @abstractmethod
    def switch(self, on: bool, threads: int, iops: int | None = None) -> dict[str, Any]:
        """Start the engine's own switch of every existing table to encrypted (``on``) or back to plaintext, with
        ``threads`` background workers and at most ``iops`` page operations a second (None: the engine's default),
        and return at once (the settings applied); :meth:`progress` follows it."""


class Restarting(OnlineSwitcher[InstanceT]):
    """An online switch that needs a restart: before switching on (what only a restart loads, e.g. a key plugin and
    the redo log's encryption), and after the way back (it unloads them)."""

    #: what the restart is for, in the engine's words (:attr:`SwitchMethod.restart`)
    restart_reason: ClassVar[str]

    @abstractmethod
    def restart(self, on: bool, step: Step) -> dict[str, Any] | None:
        """The restart before switching on (``on``) or after the way back; returns when the server serves again,
        with facts, or None when it already is in that state (nothing restarted)."""


class OfflineSwitcher(Switcher[InstanceT]):
    """A switch the engine runs with no workload connected (a copy or a rewrite)."""

    @abstractmethod
    def switch(self, on: bool, step: Step) -> dict[str, Any]:
        """Encrypt the existing data (``on``) or decrypt them by the engine's own offline method, and return when
        the engine is done (facts for the run directory, numbers and short strings)."""


class Copying(OfflineSwitcher[InstanceT]):
    """An offline switch that copies the data into another place: the old copy stays, in the clear, until
    :meth:`remove_old_copy` deletes it."""

    @abstractmethod
    def remove_old_copy(self) -> dict[str, Any]:
        """Delete what the last switch left in the old place (its ``old_copy`` fact), as a DBA does once the server
        serves from the new one; facts (``removed_bytes``)."""


class Rekeying(ABC):
    """Mixed into a :class:`Switcher`: the encrypted data re-encrypted under a new key, while the database serves
    for an :class:`OnlineSwitcher`, with no workload connected for an :class:`OfflineSwitcher`."""

    #: how, in the engine's words (:attr:`SwitchMethod.rekey`)
    rekey_method: ClassVar[str]

    @abstractmethod
    def rekey(self, step: Step) -> dict[str, Any]:
        """Re-encrypt every encrypted table under another key; returns when done, with facts."""


def switcher_type(types: Sequence[type[Switcher[Any]]], spec: EncryptionSpec) -> type[Switcher[Any]] | None:
    """The first of ``types`` that switches ``spec``; None for a plain spec or one none of them switches."""
    if spec.is_plain:
        return None
    return next((t for t in types if t.switches(spec)), None)
