"""Key sources: where an encrypted config's keys live, and how an engine takes them from a key server.

A key source is an axis of a config, like its encryption spec: ``--keys file,openbao`` crosses every encrypted
spec with both sources. ``file`` is each engine's own arrangement (MariaDB's encrypted key file and its file key,
the embedded libraries' keys in tdebench's memory, ...); ``openbao`` keeps the keys on a key server (a private
OpenBao that the run starts, or the user's own OpenBao or Vault with ``--key-server``), which the database or
tdebench asks for them over TLS with a short-lived token that may only read the config's own keys. A plain config
(``none``) has no key and no key source.

The key source shows in the config label after :data:`LABEL_MARK`: ``mariadb-tde-aes-256-ctr+openbao``; a run
that compares sources labels its file-key configs ``...+file`` too (a file-key config of a run with no other source
keeps its old label).

An engine states how it takes a spec's keys from a key server by returning a :class:`KeyPath` from
:meth:`tdebench.api.engine.Engine.key_path` (None: it has no such path, and ``--keys openbao`` is refused for that
spec before any work). The runner stores the keys the path :attr:`KeyPath.needs` on the key server and hands the
instance a :class:`KeyAccess` (:meth:`tdebench.api.engine.Instance.take_keys`) before it first starts. Nothing
here holds a key: a :class:`KeyAccess` fetches one when asked, for the caller to hand to the DBMS only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tdebench.api.regime import regime_label, split_label
from tdebench.api.switch import SwitchProgress
from tdebench.encryption import SecretKey
from tdebench.errors import UsageError

FILE = "file"
OPENBAO = "openbao"
#: every key source, the default first
KEY_SOURCES = (FILE, OPENBAO)
#: what separates a config's label from its key source (never part of a spec's label)
LABEL_MARK = "+"
#: what fetches a key on the way of a :class:`KeyPath` (:attr:`KeyPath.fetched_by`)
BY_SERVER = "the database server"
BY_TDEBENCH = "tdebench"
BY_HELPER = "a helper program the encryption layer runs"


def parse_key_sources(value: Any) -> tuple[str, ...]:
    """``"file,openbao"`` or ``["file", "openbao"]`` -> ("file", "openbao"); UsageError naming the known sources."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    sources = tuple(str(i).strip().lower() for i in items if str(i).strip())
    if not sources:
        raise UsageError("empty --keys list", f"give one or more of {', '.join(KEY_SOURCES)}, e.g. --keys file,openbao")
    for source in sources:
        if source not in KEY_SOURCES:
            raise UsageError(f"unknown key source '{source}' in --keys",
                             f"use {' or '.join(KEY_SOURCES)} (comma-separated), e.g. --keys file,openbao")
    if len(set(sources)) != len(sources):
        raise UsageError("a key source is listed twice in --keys", "list each source once, e.g. --keys file,openbao")
    return sources


def split_keys(label: str) -> tuple[str, str]:
    """``mariadb-tde-aes-256-ctr+openbao`` -> (``mariadb-tde-aes-256-ctr``, ``openbao``); "" as the source for a
    label that names none (its engine's own keys, or no key)."""
    base, mark, source = label.rpartition(LABEL_MARK)
    return (base, source) if mark and source in KEY_SOURCES else (label, "")


def keyed_label(base: str, source: str) -> str:
    """``base`` with the key source ``source`` marked (:data:`LABEL_MARK`)."""
    return f"{base}{LABEL_MARK}{source}"


def file_twin(label: str, labels: Iterable[str]) -> str | None:
    """The config of ``labels`` that a key server's config ``label`` is compared with: the same spec with file keys
    (``...+file``, or the unmarked label), at the same memory ratio; None for any other config or without one."""
    base_label, ratio = split_label(label)
    base, source = split_keys(base_label)
    if not source or source == FILE:
        return None
    pool = set(labels)
    return next((regime_label(c, ratio) for c in (keyed_label(base, FILE), base) if regime_label(c, ratio) in pool),
                None)


@dataclass(frozen=True)
class KeyNeed:
    """One key a config needs on the key server: its id (the secret's name), its length, what it encrypts; a key
    that is not ``required`` is stored on a private key server, and only used from a user's when it is there."""

    key_id: int
    bits: int
    what: str
    required: bool = True

    def __post_init__(self) -> None:
        if self.key_id < 1 or self.bits <= 0 or self.bits % 8:
            raise ValueError(f"bad key need: id {self.key_id}, {self.bits} bits")


@dataclass(frozen=True)
class KeyPath:
    """How an engine takes one spec's keys from a key server (a capability object of the engine).

    ``needs``: the keys the server must hold (one KV secret per key id, field ``data`` = the key in hex);
    ``fetched_by``: who asks the key server (:data:`BY_SERVER`, :data:`BY_TDEBENCH`, :data:`BY_HELPER`);
    ``how``: one sentence on the way (the manifest and the threat model quote it); ``versions``: the engine
    follows a key's newest version and re-encrypts its data under it while it serves (rotation by key version);
    ``settings``: the engine settings that tune it (e.g. the key plugin's cache timeouts)."""

    needs: tuple[KeyNeed, ...]
    fetched_by: str
    how: str
    versions: bool = False
    settings: tuple[str, ...] = ()

    def facts(self) -> dict[str, Any]:
        """What the manifest records of the path (no key)."""
        return {"needs": [{"key_id": n.key_id, "bits": n.bits, "what": n.what, "required": n.required}
                          for n in self.needs],
                "fetched_by": self.fetched_by, "how": self.how, "versions": self.versions,
                **({"settings": list(self.settings)} if self.settings else {})}


class KeyAccess(Protocol):
    """One config's read-only access to its keys on a key server, handed to its instance by the runner.

    ``mount_url`` is the KV v2 mount holding the config's keys (``https://127.0.0.1:PORT/v1/<mount>``), one secret
    per key id; ``ca_file`` the certificate the server's is verified against (None: the system's store). The
    token may read that mount only and expires unless the runner renews it."""

    source: str
    mount_url: str
    ca_file: Path | None
    #: tdebench may write and retire key versions there (the run's own key server; a user's is read only)
    rotatable: bool

    def token(self) -> str:
        """The config's token (for a process that fetches its keys itself; never written to a file)."""

    def fetch(self, key_id: int, version: int | None = None) -> SecretKey:
        """Key ``key_id`` (its newest version, or ``version``) as the key server returns it: one request.
        :class:`tdebench.errors.EnvironmentProblem` naming the reason when the server refuses or cannot be reached."""

    def secret_url(self, key_id: int) -> str:
        """The URL that returns key ``key_id`` (JSON: ``data.data.data`` holds the hex) with the token."""

    def latest_version(self, key_id: int) -> int:
        """The newest version of key ``key_id`` (one request)."""

    def new_version(self, key_id: int) -> int:
        """Write a new random version of key ``key_id`` (its length kept); its number. Only when ``rotatable``."""

    def retire_versions(self, key_id: int, versions: list[int], how: str) -> None:
        """``how``: ``delete`` (unreadable, but recoverable), ``undelete`` or ``destroy`` (gone for good) the
        ``versions`` of key ``key_id``. Only when ``rotatable``."""

    def facts(self) -> dict[str, Any]:
        """Where the keys are, for the manifest: server, mount, token policy and lifetime (never a secret)."""


class KeyRotation(ABC):
    """How an instance re-encrypts its data under newer versions of its keys while it serves: a capability object
    (:meth:`tdebench.api.engine.Instance.key_rotation`; None where the instance has none). The ``encrypt``
    workload writes the versions on the key server (:meth:`KeyAccess.new_version`) and times the rest."""

    @abstractmethod
    def versions_in_use(self) -> dict[int, int]:
        """Key id -> the oldest version any unit (tablespace) of the data is encrypted with."""

    @abstractmethod
    def age(self) -> int:
        """How many versions the newest must be ahead of a unit's before the engine re-encrypts it (0: it never
        does: the newest version must then be this far ahead, plus one)."""

    @abstractmethod
    def start(self, threads: int) -> dict[str, Any]:
        """Let ``threads`` background workers re-encrypt whatever lags behind; the settings applied."""

    @abstractmethod
    def progress(self, targets: dict[int, int]) -> SwitchProgress:
        """How many units are on at least version ``targets[key id]``, as the engine reports it."""

    @abstractmethod
    def left_behind(self, targets: dict[int, int]) -> list[str]:
        """Everything that still needs a version older than ``targets`` (would be lost if those were destroyed)."""

    @abstractmethod
    def finish(self, step: Callable[[str], None]) -> dict[str, Any]:
        """Re-encrypt under the newest versions what the background workers leave under the old ones (e.g. a redo
        log, tables of another storage engine), interrupting the service if it must; ``step(name)`` as each part
        begins. Facts."""

    @abstractmethod
    def table_sums(self) -> dict[str, str]:
        """Every table of the server's user data: its row count and the engine's checksum of its rows, as one text
        (what a restart must not change)."""

    @abstractmethod
    def read_all(self) -> dict[str, Any]:
        """Restart and read every table (counted rows): the proof that no older version is needed. Raises the
        engine's error when it cannot."""
