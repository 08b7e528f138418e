"""PostgreSQL: plain, pgcrypto column encryption (``column:*``) and gocryptfs filesystem encryption (``fs:*``).

Community PostgreSQL has no TDE. Its users encrypt columns with pgcrypto or put the data directory on an
encrypted filesystem; both are offered here against a plain twin with identical settings:

* ``none`` -- a private cluster (see :mod:`tdebench.engines.postgres.server`).
* ``column:aes-{128,192,256}``, ``column:3des``, ``column:pgp-{aes128,aes192,aes256,3des}`` -- every
  non-key column stored as pgcrypto ciphertext (``bytea``) in ``<table>_enc``; views with the original
  table names decrypt, so the TPC-H queries run unchanged (:mod:`tdebench.engines.postgres.column`).
* ``fs:gocryptfs``, ``fs:gocryptfs-aessiv``, ``fs:gocryptfs-xchacha`` -- the whole data directory on a
  gocryptfs mount (:mod:`tdebench.engines.toolkit.fsencrypt`); at-rest scans read the cipher directory.

The instance and its layout on disk: :mod:`.instance`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from tdebench.api.dialect import POSTGRES
from tdebench.api.engine import DEFAULT_DATABASE, Config, Engine
from tdebench.api.footprint import MIB, Footprint, size_setting
from tdebench.api.keys import BY_TDEBENCH, KeyNeed, KeyPath
from tdebench.api.tables import TableSpec
from tdebench.encryption import PLAIN, EncryptionSpec, parse_spec
from tdebench.engines.toolkit import fscrypt, fsencrypt
from tdebench.engines.postgres.column import (DEFAULT_PGP_OPTIONS, KEY_SETTING, PgCipher, PgColumnInstance,
                                              check_encrypt_columns, validate_column_options)
from tdebench.engines.postgres.column_switch import PgcryptoSwitcher
from tdebench.engines.postgres.counters import SharedBuffers, check_headroom
from tdebench.engines.postgres.server import DEFAULTS, extension_available, find_bindir, server_version, validate_gucs
from tdebench.engines.postgres.instance import TDEBENCH_KEYS, PostgresInstance
from tdebench.engines.postgres.layer import PostgresLayerSwitcher
from tdebench.errors import EnvironmentProblem

COLUMN_SPECS = [parse_spec(t) for t in ("column:aes-128", "column:aes-192", "column:aes-256", "column:3des",
                                         "column:pgp-aes128", "column:pgp-aes192", "column:pgp-aes256",
                                         "column:pgp-3des")]


class PostgresEngine(Engine):
    """A private PostgreSQL cluster per config."""

    name = "postgres"
    dialect = POSTGRES
    description = ("PostgreSQL (Debian postgresql), plain, pgcrypto column encryption (AES-128/192/256, 3DES, "
                   "OpenPGP) or the data directory on gocryptfs (AES-256-GCM, AES-SIV, XChaCha20-Poly1305)")
    cache_type = SharedBuffers
    switcher_types = (PgcryptoSwitcher, PostgresLayerSwitcher)  # both offline: pgcrypto's UPDATE, a copy of pgdata

    @cached_property
    def bindir(self) -> Path:
        return find_bindir()

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, *COLUMN_SPECS, *fsencrypt.fs_specs(), *fscrypt.fs_specs()]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return parse_spec("column:aes-256")

    def check_available(self) -> None:
        _ = self.bindir
        if importlib.util.find_spec("psycopg") is None:
            raise EnvironmentProblem("the Python driver psycopg is missing", "pip install 'psycopg[binary]'")

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        """EnvironmentProblem if what ``spec`` needs (pgcrypto, FUSE, gocryptfs) is not installed."""
        self.check_available()
        if spec.mechanism == "column" and not extension_available(self.bindir, "pgcrypto"):
            raise EnvironmentProblem("the PostgreSQL extension pgcrypto is not installed",
                                     "install the Debian package postgresql-contrib")
        if fsencrypt.is_fs_spec(spec):
            fsencrypt.check_available()
        if fscrypt.is_fscrypt_spec(spec):
            fscrypt.check_available(spec)

    def plan_settings(self, specs: Sequence[EncryptionSpec]) -> dict[str, str]:
        return fscrypt.plan_settings(list(specs))

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        """pgcrypto's key fetched by every session as it opens; the filesystems' own paths."""
        if spec.mechanism == "column":
            bits = PgCipher.from_spec(spec, DEFAULT_PGP_OPTIONS).key_bytes * 8
            return KeyPath((KeyNeed(1, bits, f"pgcrypto key ({spec.cipher})"),), BY_TDEBENCH,
                           "every session fetches the key from the key server as it opens and sets it as its "
                           f"{KEY_SETTING} setting (a bound parameter: in no statement text)")
        return fscrypt.key_path(spec) or fsencrypt.key_path(spec)

    def version(self) -> str:
        return server_version(self.bindir)

    def default_settings(self) -> dict[str, str]:
        return dict(DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        fscrypt.validate_storage(settings)
        if fscrypt.on_loop_image(PLAIN, settings):
            fscrypt.check_available()
        validate_gucs({k: v for k, v in settings.items() if k not in TDEBENCH_KEYS})
        validate_column_options(settings)
        check_headroom(settings)

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "PostgresInstance":
        self.validate_spec(config.spec)
        self.validate_settings(dict(config.settings))
        self.check_spec_available(config.spec)
        if config.spec.mechanism == "column":
            return PgColumnInstance(config, workdir, self.bindir, database)
        return PostgresInstance(config, workdir, self.bindir, database)

    def check_tables(self, config: Config, tables: Sequence[TableSpec]) -> None:
        """``encrypt_columns`` must name non-key columns of the workload's tables."""
        if config.settings.get("encrypt_columns"):
            check_encrypt_columns(config.settings["encrypt_columns"], tables)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        """Measured per mechanism (docs/reliability.md); WAL is capped by max_wal_size (+25%: a soft limit).
        gocryptfs hides which files are WAL, so fs takes plain PostgreSQL's log factor."""
        cap = size_setting(settings.get("max_wal_size"), MIB, 1024 * MIB) * 1.25
        if spec.mechanism == "column" and spec.cipher.startswith("pgp"):
            return Footprint(peak=11.5, final=9.3, log=8.9, fixed=80 * MIB, log_cap=cap)
        if spec.mechanism == "column":
            return Footprint(peak=3.4, final=3.0, log=3.3, fixed=80 * MIB, log_cap=cap)
        fixed = 80 * MIB if fsencrypt.is_fs_spec(spec) else 64 * MIB
        fixed += fscrypt.EXT4_OVERHEAD if fscrypt.on_loop_image(spec, settings) else 0
        return Footprint(peak=2.7, final=2.0, log=1.8, fixed=fixed, log_cap=cap)
