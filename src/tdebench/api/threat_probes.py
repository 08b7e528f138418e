"""What an instance can tell about each attacker of the threat model (:mod:`tdebench.verify.threats`,
docs/security.md), as a capability object.

An instance whose engine can answer returns a subclass of :class:`ThreatProbes` from
:meth:`tdebench.api.engine.Instance.threats` (None: it offers none, the default; the threat model then asks
:func:`tdebench.api.engine.threat_probes`, whose answers are the defaults below). Each method answers one question about an attacker.
The defaults say "not known" (None), which makes the row "not checked" with the reason; an engine overrides what it
can answer. No probe returns a key, password or canary value: they return facts, paths, or rows read back for the
caller to count.
"""

from __future__ import annotations

import contextlib
import pwd
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from tdebench.api.canary import CANARY_TABLE

#: the engine's own instance class the probes belong to
InstanceT = TypeVar("InstanceT")


class ThreatProbes(Generic[InstanceT]):
    """The threat-model probes of one instance of the engine's own instance class ``InstanceT``; the defaults
    answer "not known"."""

    def __init__(self, instance: InstanceT) -> None:
        #: the instance probed (the engine's own class)
        self.instance = instance

    def disk_paths(self) -> list[Path]:
        """Every file or directory this instance keeps on disk (data, logs, temp, configuration, key files),
        as a copy of the disk shows it; a FUSE mount's decrypted view is not on disk. Default: the data dir."""
        return [self.instance.data_dir]  # type: ignore[attr-defined]

    def live_paths(self) -> list[Path] | None:
        """The instance's files as a process on the running host opens them while the instance runs: the
        database files themselves, or the unlocked view of a filesystem encryption (its mount). None: not known."""
        return None

    def live_reader(self) -> pwd.struct_passwd | None:
        """The OS user as whom :meth:`live_paths` must be read: the server's, when they are a mount that admits only
        that user (gocryptfs without ``-allow_other``). None: tdebench reads them itself."""
        return None

    def data_dir_parts(self) -> dict[str, list[str]] | None:
        """Globs relative to the instance's ``data_dir`` naming its parts: ``datadir`` (the database's own data
        directory, when ``data_dir`` also holds logs, key files or configuration; default: every file), ``redo``
        (redo log / WAL), ``temp`` (temporary tablespaces and files). ``{}``: no part named; None: the parts cannot
        be told apart (e.g. encrypted file names)."""
        return {}

    def key_storage(self) -> list[dict[str, Any]] | None:
        """Where each key lives, one dict per key: ``key`` (what it is), ``where``, ``on_disk`` (bool),
        ``beside_data`` (bool: on the same disk as the data), ``mode`` (octal text), ``protected_by`` (what
        wraps it), ``found_in_clear`` (files holding its value in clear, searched by the engine), optionally
        ``named_in`` (the service configuration that points to it). ``[]`` for a config without keys; None when
        not known."""
        return None

    def statement_logs(self) -> dict[str, Any] | None:
        """Statement logging as the server runs: ``enabled`` (bool), ``settings`` (the switches as the server
        reports them), ``files`` (paths of statement logs), ``server_logs`` (other logs, e.g. the error log),
        ``min_duration_s`` (only statements this slow are logged; None = every statement). A dict with
        ``applicable: False`` and ``reason`` for engines without server logs; None when not known."""
        return None

    def literal_lookup_sql(self, markers: list[str], seconds: float) -> str:
        """A lookup of the canary rows with the markers as literals in the statement text, as applications
        write them, lasting at least ``seconds`` (so a slow-query log with that threshold records it)."""
        literals = ", ".join(f"'{m}'" for m in markers)
        return f"SELECT COUNT(*) FROM {CANARY_TABLE} WHERE marker IN ({literals})"

    def temp_locations(self) -> list[Path] | None:
        """Directories or files where the server writes temporary and spill files on disk (for ``fs:*``
        configs the cipher directory: file names are encrypted). Open files of the instance's ``server_pids``
        below these paths are read too, including deleted ones. None when not known."""
        return None

    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any] | None]:
        """Hold open a query that sorts many copies of the canary rows (read the way the workload reads its
        data, decrypted where the engine decrypts) with the smallest sort memory, so its spill files exist
        while the block runs. Yields what the server reports (``spill_files``, ``spill_bytes``, ``settings``,
        ``query``), or ``{"in_memory": reason}`` when temporary data never reaches a file; None: no probe."""
        yield None

    def read_as_select_user(self) -> dict[str, Any] | None:
        """Create a user with SELECT on the benchmark schema only (no key), read every canary relation as that
        user, drop the user. ``{"user", "grants", "relations": {name: {"rows": [...]} or {"error": text}}}``;
        a dict with ``applicable: False`` and ``reason`` for engines without users; None when not known."""
        return None

    def replication_cache(self) -> dict[str, Any] | None:
        """A cluster's replication files on disk: ``globs`` (relative to the instance's ``data_dir``) of the
        write-set cache of every node (Galera's gcache), ``encryption`` (``offered``, ``enabled``, ``reason``: what
        the provider says), ``what``; ``transfer_globs``: the files a joining node received by state transfer,
        ``transfer`` (how). None for engines without replication."""
        return None

    def transport_security(self) -> dict[str, Any] | None:
        """TLS as the server is configured: ``tls`` (bool: offered), ``required`` (bool), ``listen`` (where it
        listens), ``settings``. ``applicable: False`` with ``reason`` for embedded engines; None: not known."""
        return None

    def core_dump_facts(self) -> dict[str, Any] | None:
        """The engine's own switches about core dumps and locked memory (e.g. MariaDB ``core_file``,
        ``memlock``): ``server_dumps_core`` (bool or None), ``settings``. None: nothing beyond the OS limits."""
        return None
