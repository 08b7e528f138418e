"""External targets: ``--target LABEL=URL[#SPEC]`` parsed, checked and turned into configs.

A target is a database server tdebench does not manage (SQL Server, Oracle, MySQL, a cloud service)::

    --target plain=mysql://bench@db1.example:3306/tpch
    --target enc='mysql://bench@db2.example:3306/tpch?password_env=DB2_PW#tde:aes-256-cbc'

* ``LABEL`` names the config in results (letters, digits, ``_ . -``).
* The URL scheme picks the DBMS: ``mysql``, ``mariadb``, ``postgresql`` (or ``postgres``), ``mssql`` (or
  ``sqlserver``), ``oracle``. User, host, port and database (Oracle: service name) are in the URL. The
  database is reserved for tdebench: its TPC-H tables are dropped and re-created.
* The fragment (``#SPEC``) declares the encryption the server is supposed to have (default ``none``).
  tdebench reads the server's own status and refuses a declaration the server contradicts or cannot confirm,
  unless ``--override-encryption-check LABEL`` is given (recorded in the run directory).
* The password is never part of the URL. It comes from the environment variable named by
  ``?password_env=VAR``, else from ``TDEBENCH_PASSWORD_<LABEL>``, else from a prompt on a terminal. It lives
  in this process's memory only and is redacted from every message.
"""

from __future__ import annotations

import getpass
import os
import re
import sys
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from tdebench import encryption
from tdebench.encryption import PLAIN, EncryptionSpec, parse_spec
from tdebench.engines.toolkit.dbapi.kinds import KINDS, Kind, mysql_key_size_reason
from tdebench.errors import UsageError

ENGINE = "external"
CHECK_STRICT = "required"
CHECK_OVERRIDDEN = "overridden"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_QUERY_KEYS = ("password_env",)
NOT_SCANNABLE = "on-disk verification not possible for external targets"


ALIASES = {"postgres": "postgresql", "sqlserver": "mssql", "mysql+pymysql": "mysql"}


def all_specs() -> list[EncryptionSpec]:
    """Every spec some target kind can declare (``fs:*`` included)."""
    out = {s for kind in KINDS.values() for s in kind.specs}
    out |= {parse_spec(t) for t in ("fs:gocryptfs", "fs:gocryptfs-aessiv", "fs:gocryptfs-xchacha")}
    return sorted(out, key=lambda s: (not s.is_plain, str(s)))


@dataclass(frozen=True)
class Target:
    """One parsed ``--target``: everything but the password."""

    label: str
    kind: Kind
    user: str
    host: str
    port: int
    database: str
    spec: EncryptionSpec
    password_env: str = ""

    @property
    def url(self) -> str:
        """The URL as recorded in the run directory: no password, no fragment."""
        query = f"?{urlencode({'password_env': self.password_env})}" if self.password_env else ""
        return f"{self.kind.scheme}://{self.user}@{_host(self.host)}:{self.port}/{self.database}{query}"

    @property
    def where(self) -> tuple[str, int, str]:
        return (self.host.lower(), self.port, self.database.lower())


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _kind_reason(kind: Kind, spec: EncryptionSpec) -> str:
    """Why a target of ``kind`` cannot declare ``spec``, in the DBMS's own terms (empty if no special reason)."""
    if spec.mechanism == "column":
        return ("column encryption changes the schema; external targets are measured as they are, "
                "so declare table-level encryption (tde:*) or none")
    if kind.scheme == "mysql":
        return mysql_key_size_reason(spec)
    if kind.scheme in ("mssql", "oracle") and spec.mechanism == "tde" and spec.mode is not None:
        what = ("the database encryption key (CREATE DATABASE ENCRYPTION KEY WITH ALGORITHM = AES_n) has no mode "
                "option and sys.dm_database_encryption_keys reports none" if kind.scheme == "mssql" else
                "ENCRYPTION USING takes an algorithm name only (AESn); the mode is Oracle's and is not reported")
        return f"{what}, so a mode in the label could never be confirmed: declare tde:aes-{spec.key_bits}"
    if kind.scheme == "mariadb" and spec.cipher == "3des":
        return "MariaDB's key management plugins encrypt with AES only"
    return ""


def check_spec(kind: Kind, spec: EncryptionSpec) -> None:
    """UsageError if a target of ``kind`` cannot declare ``spec``, with the reason and the choices."""
    if spec.scope:
        raise UsageError(f"encryption scopes (@{spec.scope}) do not apply to external targets",
                         "declare the mechanism and cipher only, e.g. #tde:aes-256-cbc")
    if spec in kind.specs or spec.mechanism == "fs":
        return
    allowed = ", ".join(str(s) for s in kind.specs) + ", fs:* (declared only; needs the override flag)"
    reason = _kind_reason(kind, spec)
    raise UsageError(f"a {kind.product} target cannot declare '{spec}'" + (f": {reason}" if reason else ""),
                     f"declare one of: {allowed}")


def _split(text: str) -> tuple[str, str]:
    label, sep, url = text.partition("=")
    label = label.strip()
    if not sep or not url.strip():
        raise UsageError(f"bad --target '{_safe(text)}'", "write LABEL=URL, e.g. enc=mysql://bench@db:3306/tpch"
                         "#tde:aes-256-cbc")
    if not _LABEL.match(label):
        raise UsageError(f"bad target label '{label}'", "use letters, digits, '_', '.', '-' (at most 40)")
    return label, url.strip()


def _safe(text: str) -> str:
    """``text`` with any ``user:password@`` part blanked (for error messages)."""
    return re.sub(r"(//[^/@:]*):[^@/]*@", r"\1:***@", text)


def parse_target(text: str) -> Target:
    """Parse ``LABEL=URL[#SPEC]``; UsageError naming what is wrong (never echoing a password)."""
    label, url = _split(text)
    parts = urlsplit(url)
    scheme = ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
    kind = KINDS.get(scheme)
    if kind is None:
        raise UsageError(f"target '{label}': unknown URL scheme '{parts.scheme}'",
                         f"use one of: {', '.join(KINDS)} (aliases: {', '.join(ALIASES)})")
    if parts.password is not None:
        raise UsageError(f"target '{label}': the URL contains a password",
                         f"never put passwords in URLs (shell history, process list, results); set "
                         f"{password_variable(label)} or name a variable with ?password_env=VAR")
    if not parts.username or not parts.hostname:
        raise UsageError(f"target '{label}': the URL needs a user and a host",
                         f"write {kind.scheme}://USER@HOST[:PORT]/DATABASE")
    database = unquote(parts.path.lstrip("/"))
    if not database or "/" in database:
        raise UsageError(f"target '{label}': the URL needs a database"
                         + (" (Oracle: the service name)" if kind.scheme == "oracle" else ""),
                         f"write {kind.scheme}://USER@HOST[:PORT]/DATABASE; tdebench drops and re-creates the "
                         "TPC-H tables in it, so reserve one for tdebench")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - set(_QUERY_KEYS))
    if unknown:
        raise UsageError(f"target '{label}': unknown URL parameter(s) {', '.join(unknown)}",
                         f"allowed: {', '.join(_QUERY_KEYS)}")
    try:
        port = parts.port or kind.port
    except ValueError as exc:
        raise UsageError(f"target '{label}': bad port in the URL", "give a number, e.g. :3306") from exc
    spec = parse_spec(unquote(parts.fragment)) if parts.fragment else PLAIN
    check_spec(kind, spec)
    return Target(label, kind, unquote(parts.username), parts.hostname, port, database, spec,
                  query.get("password_env", ""))


def password_variable(label: str) -> str:
    """``TDEBENCH_PASSWORD_<LABEL>``: the label upper-cased, other characters as ``_``."""
    return "TDEBENCH_PASSWORD_" + re.sub(r"[^A-Z0-9]", "_", label.upper())


_PASSWORDS: dict[tuple[str, str], str] = {}


def _remember(password: str) -> None:
    """Make :func:`tdebench.encryption.redact` scrub the password (long enough not to mangle text)."""
    if len(password) >= 6:
        register = getattr(encryption, "register_secret", None)
        if register is not None:
            register(password)
        else:  # until encryption.py offers register_secret (see docs/engines/external.md)
            encryption._ISSUED.add(password)  # noqa: SLF001


def resolve_password(target: Target, interactive: bool | None = None) -> str:
    """The target's password: ``password_env`` variable, ``TDEBENCH_PASSWORD_<LABEL>``, or a prompt."""
    key = (target.label, target.url)
    if key in _PASSWORDS:
        return _PASSWORDS[key]
    default_var = password_variable(target.label)
    if target.password_env:
        if target.password_env not in os.environ:
            raise UsageError(f"target '{target.label}': the environment variable {target.password_env} "
                             "(password_env) is not set", f"export {target.password_env} before running tdebench")
        password = os.environ[target.password_env]
    elif default_var in os.environ:
        password = os.environ[default_var]
    elif interactive if interactive is not None else sys.stdin.isatty():
        password = getpass.getpass(f"password for target {target.label} ({target.user}@{target.host}): ")
    else:
        raise UsageError(f"target '{target.label}': no password",
                         f"set {default_var}, or add ?password_env=VAR to the URL, or run on a terminal to "
                         "be asked")
    _remember(password)
    _PASSWORDS[key] = password
    return password


__all__ = ["NOT_SCANNABLE", "Target", "all_specs", "check_spec", "parse_target", "password_variable",
           "resolve_password"]
