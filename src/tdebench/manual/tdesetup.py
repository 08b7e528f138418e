"""``tdebench tde-setup``: which encryption specs each server can really do, and the steps to turn it on (the
server's own TDE, or, for MariaDB and MySQL, its data directory moved into filesystem encryption: ``fs:``).

The rules come from the servers' documentation: the MySQL Reference Manual, "InnoDB Data-at-Rest Encryption";
Microsoft's "Transparent data encryption (TDE)" for SQL Server; the Oracle Database Advanced Security Guide,
"Configuring Transparent Data Encryption"; MariaDB's "Data-at-Rest Encryption Overview" and "File Key
Management Encryption Plugin":

* MySQL InnoDB encrypts with AES-256 only (CBC for pages); a key size or mode cannot be chosen, so
  ``tde:aes-128``/``tde:aes-192`` (and other modes) are refused — a study reporting them measured AES-256.
* SQL Server: DEK ``ALGORITHM = AES_128 | AES_192 | AES_256 | TRIPLE_DES_3KEY``; the mode is not selectable.
* Oracle: tablespace ``ENCRYPTION USING 'AES128' | 'AES192' | 'AES256' | '3DES168'``; the mode is not
  selectable with that clause.
* MariaDB ``file_key_management``: AES-128/192/256 picked by the key's hex length, mode CBC or CTR.

Only placeholders such as ``<KEYSTORE_PASSWORD>`` are printed, never a secret.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tdebench.encryption import EncryptionSpec, parse_spec
from tdebench.errors import UsageError

_ALIASES = {"mssql": "sqlserver", "sql-server": "sqlserver", "tsql": "sqlserver"}


@dataclass(frozen=True)
class Setup:
    """A validated request: engine, spec and what it maps to on that server."""

    engine: str
    spec: EncryptionSpec
    algorithm: str = ""  # the server's own name, e.g. AES_256, 'AES256', AES_CTR
    bits: int = 0
    scope: str = ""

    @property
    def plain(self) -> bool:
        return self.spec.is_plain


def _refuse(engine: str, spec: EncryptionSpec, why: str, fix: str) -> UsageError:
    return UsageError(f"{engine} cannot do '{spec}': {why}", fix)


def _mysql(engine: str, spec: EncryptionSpec, bits: int, mode: str | None) -> Setup:
    if spec.cipher == "3des" or bits != 256:
        raise _refuse(engine, spec, "MySQL InnoDB data-at-rest encryption uses AES-256 only (no other key "
                      "size exists, so results labelled AES-128/192 would be AES-256)", "use tde:aes-256-cbc")
    if mode not in (None, "cbc"):
        raise _refuse(engine, spec, "InnoDB encrypts tablespace pages with AES-256-CBC; the mode cannot be "
                      "chosen (block_encryption_mode only affects AES_ENCRYPT())", "use tde:aes-256-cbc")
    return Setup(engine, spec, "AES-256-CBC", 256, spec.scope)


def _sqlserver(engine: str, spec: EncryptionSpec, bits: int, mode: str | None) -> Setup:
    if mode is not None:
        raise _refuse(engine, spec, "the database encryption key has no mode option",
                      f"use tde:aes-{bits}" if bits else "use tde:aes-256")
    algorithm = "TRIPLE_DES_3KEY" if spec.cipher == "3des" else f"AES_{bits}"
    return Setup(engine, spec, algorithm, bits or 192, spec.scope)


def _oracle(engine: str, spec: EncryptionSpec, bits: int, mode: str | None) -> Setup:
    if mode is not None:
        raise _refuse(engine, spec, "ENCRYPTION USING takes an algorithm name only; the mode is Oracle's",
                      f"use tde:aes-{bits}" if bits else "use tde:aes-256")
    algorithm = "3DES168" if spec.cipher == "3des" else f"AES{bits}"
    return Setup(engine, spec, algorithm, 168 if spec.cipher == "3des" else bits, spec.scope)


def _mariadb(engine: str, spec: EncryptionSpec, bits: int, mode: str | None) -> Setup:
    if spec.cipher == "3des":
        raise _refuse(engine, spec, "file_key_management encrypts with AES only", "use tde:aes-256-cbc")
    if mode not in (None, "cbc", "ctr"):
        raise _refuse(engine, spec, "file_key_management_encryption_algorithm is AES_CBC or AES_CTR",
                      f"use tde:aes-{bits}-cbc or tde:aes-{bits}-ctr")
    return Setup(engine, spec, f"AES_{(mode or 'cbc').upper()}", bits, spec.scope)


#: servers whose data directory tde-setup moves into filesystem encryption (manual/fs_steps.py)
FS_ENGINES = ("mariadb", "mysql")


def _filesystem(engine: str, spec: EncryptionSpec) -> Setup:
    """An ``fs:`` spec: the data directory moved into fscrypt or gocryptfs (Linux servers with a data directory)."""
    if engine not in FS_ENGINES:
        raise _refuse(engine, spec, "tde-setup writes filesystem-encryption steps for servers with a Linux data "
                      f"directory ({', '.join(FS_ENGINES)})", "use the server's own TDE, e.g. tde:aes-256")
    if spec.scope:
        raise _refuse(engine, spec, "filesystem encryption covers the whole data directory: it has no scope",
                      f"use fs:{spec.cipher}")
    return Setup(engine, spec, spec.cipher)


@dataclass(frozen=True)
class Server:
    """A server ``tde-setup`` writes steps for: the scopes of its TDE and how a spec maps onto it."""

    name: str
    scopes: tuple[str, ...]
    #: the spec in the server's own terms; UsageError when the server cannot do it
    check: Callable[[str, EncryptionSpec, int, str | None], Setup]


SERVERS: tuple[Server, ...] = (
    Server("mysql", ("", "all", "tables"), _mysql),
    Server("sqlserver", ("", "all"), _sqlserver),
    Server("oracle", ("", "all"), _oracle),
    Server("mariadb", ("", "all", "innodb", "tables"), _mariadb),
)
ENGINES = tuple(s.name for s in SERVERS)
_BY_NAME = {s.name: s for s in SERVERS}


def check_engine(engine: str) -> str:
    """The engine name; UsageError listing the supported ones."""
    name = engine.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in _BY_NAME:
        raise UsageError(f"tde-setup does not know engine '{engine}'", f"use one of: {', '.join(ENGINES)}")
    return name


def validate(engine: str, spec_text: str) -> Setup:
    """Check that ``engine`` can do ``spec_text``; UsageError (exit 2) with the reason otherwise."""
    server = _BY_NAME[check_engine(engine)]
    spec = parse_spec(spec_text)
    if spec.is_plain:
        return Setup(server.name, spec)
    if spec.mechanism == "fs":
        return _filesystem(server.name, spec)
    if spec.mechanism != "tde":
        raise _refuse(server.name, spec, f"tde-setup covers the server's own TDE and filesystem encryption, not "
                      f"'{spec.mechanism}:' encryption", "use a tde: or fs: spec, e.g. tde:aes-256 or fs:fscrypt")
    if spec.scope not in server.scopes:
        raise _refuse(server.name, spec, f"unknown scope '@{spec.scope}'",
                      "scopes here: " + ", ".join("@" + s for s in server.scopes if s) + " (or none)")
    return server.check(server.name, spec, spec.key_bits or 0, spec.mode)
