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
from dataclasses import dataclass, fields
from importlib.util import find_spec
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from tdebench import encryption
from tdebench.api.dialect import Dialect, StorageCatalog
from tdebench.encryption import PLAIN, EncryptionSpec, parse_spec
from tdebench.api.engine import Config
from tdebench.errors import EnvironmentProblem, UsageError

ENGINE = "external"
CHECK_STRICT = "required"
CHECK_OVERRIDDEN = "overridden"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_QUERY_KEYS = ("password_env",)
NOT_SCANNABLE = "on-disk verification not possible for external targets"


def _specs(*texts: str) -> tuple[EncryptionSpec, ...]:
    return tuple(parse_spec(t) for t in texts)


@dataclass(frozen=True)
class Kind:
    """One DBMS reachable by URL: its dialect, driver and the encryption it can declare."""

    scheme: str
    product: str
    dialect: str                      # the SQL dialect the workload is translated to
    module: str                       # Python driver, imported lazily
    pip: str                          # what to pip install when it is missing
    port: int
    specs: tuple[EncryptionSpec, ...]  # declarable besides fs:* (which no server can confirm)


_AES = ("aes-128", "aes-192", "aes-256")
KINDS: dict[str, Kind] = {
    "mysql": Kind("mysql", "MySQL", "mysql", "pymysql", "PyMySQL", 3306, _specs("none", "tde:aes-256-cbc")),
    "mariadb": Kind("mariadb", "MariaDB", "mariadb", "pymysql", "PyMySQL", 3306,
                    _specs("none", *(f"tde:{a}-{m}" for a in _AES for m in ("cbc", "ctr")))),
    "postgresql": Kind("postgresql", "PostgreSQL", "postgres", "psycopg", "psycopg[binary]", 5432,
                       _specs("none", "tde:aes-128-cbc", "tde:aes-256-cbc")),
    "mssql": Kind("mssql", "SQL Server", "tsql", "pymssql", "pymssql", 1433,
                  _specs("none", *(f"tde:{a}" for a in _AES), "tde:3des")),
    "oracle": Kind("oracle", "Oracle", "oracle", "oracledb", "oracledb", 1521,
                   _specs("none", *(f"tde:{a}" for a in _AES), "tde:3des")),
}
ALIASES = {"postgres": "postgresql", "sqlserver": "mssql", "mysql+pymysql": "mysql"}
_CATALOGS: dict[str, StorageCatalog] = {"mysql": "information_schema", "mariadb": "information_schema",
                                        "postgres": "pg_class"}
_PROTOCOLS = {"pymysql": "mysql", "psycopg": "postgres", "pymssql": "tds", "oracledb": "oracle"}
_LOADS = {"pymysql": "LOAD DATA LOCAL INFILE (batched INSERT when local_infile is off)", "psycopg": "COPY FROM STDIN"}


def kind_dialect(kind: Kind) -> Dialect:
    """What a target of ``kind`` offers a workload: canonical SQL, rewritten for the server's own dialect."""
    return Dialect("postgres", kind.product, _PROTOCOLS[kind.module], "format", translated=True, target=kind.dialect,
                   storage_catalog=_CATALOGS.get(kind.dialect, "none"),
                   bulk_load=_LOADS.get(kind.module, "executemany batches"),
                   explain_prefix="EXPLAIN " if kind.dialect in ("mysql", "mariadb", "postgres") else None)


def all_specs() -> list[EncryptionSpec]:
    """Every spec some target kind can declare (``fs:*`` included)."""
    out = {s for kind in KINDS.values() for s in kind.specs}
    out |= set(_specs("fs:gocryptfs", "fs:gocryptfs-aessiv", "fs:gocryptfs-xchacha"))
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


MARIADB_HINT = ("a MariaDB server is measured as mariadb://USER@HOST/DB, which declares AES-128/192/256 in CBC or "
                "CTR mode")


def mysql_key_size_reason(spec: EncryptionSpec) -> str:
    """Why MySQL cannot do ``spec`` (empty if it can)."""
    if spec.mechanism != "tde":
        return ""
    if spec.cipher == "3des":
        return ("MySQL InnoDB data-at-rest encryption has no 3DES: it encrypts with AES-256 only (3DES TDE exists "
                "on SQL Server and Oracle: mssql://, oracle://)")
    if spec.key_bits in (128, 192):
        return ("MySQL InnoDB data-at-rest encryption has a single key size: AES-256 (the tablespace key is "
                "AES-256, data is encrypted in CBC mode); AES-128/192 cannot be chosen, so a result labelled "
                f"so would measure AES-256 ({MARIADB_HINT})")
    if spec.mode not in (None, "cbc"):
        return f"MySQL InnoDB encrypts tablespace data with AES-256 in CBC mode only ({MARIADB_HINT})"
    return ""


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


def check_driver(kind: Kind) -> None:
    """EnvironmentProblem naming the pip package when the target's driver is not installed."""
    if find_spec(kind.module) is None:
        raise EnvironmentProblem(f"the Python driver for {kind.product} targets ({kind.module}) is not installed",
                                 f"pip install '{kind.pip}'")


@dataclass(frozen=True)
class TargetConfig(Config):
    """A config whose label is the target's own (``settings['label']``).

    Stop-gap until :class:`Config` carries a user-chosen name itself (docs/engines/external.md).
    """

    @property
    def label(self) -> str:
        return self.settings.get("label") or f"{self.engine}-{self.spec.label}"


def target_config(target: Target, override: bool = False) -> Config:
    """The config of one target: settings hold the password-free URL, the label and the check mode."""
    settings = {"url": target.url, "label": target.label,
                "encryption_check": CHECK_OVERRIDDEN if override else CHECK_STRICT}
    if "name" in {f.name for f in fields(Config)}:  # Config carries user-chosen names: resumable as is
        return Config(ENGINE, target.spec, settings, name=target.label)  # type: ignore[call-arg]
    return TargetConfig(ENGINE, target.spec, settings)


def target_of(config: Config) -> Target:
    """The target a config describes (from its recorded URL and spec)."""
    url = config.settings.get("url", "")
    label = config.settings.get("label") or config.label
    if not url:
        raise UsageError(f"config {config.label} has no target URL", "give --target LABEL=URL")
    spec_text = "" if config.spec.is_plain else f"#{config.spec}"
    return parse_target(f"{label}={url}{spec_text}")


def target_configs(texts: list[str], overrides: list[str], interactive: bool | None = None,
                   reach: bool = False) -> list[Config]:
    """Configs for ``--target`` options; passwords resolved now so prompts come before any work.

    ``reach``: also log in to every target once, so a wrong host or password fails before the run starts.
    """
    targets = [parse_target(t) for t in texts]
    labels = [t.label for t in targets]
    if not targets:
        raise UsageError("no --target given", "write --target LABEL=URL, e.g. plain=mysql://bench@db:3306/tpch")
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise UsageError(f"target label(s) used twice: {', '.join(duplicates)}", "give every target its own label")
    kinds = {t.kind.scheme for t in targets}
    if len(kinds) > 1:
        raise UsageError(f"targets of one run must be one DBMS, got {', '.join(sorted(kinds))}",
                         "the plain target is the baseline of the encrypted ones; run each DBMS separately")
    places = [t.where for t in targets]
    shared = sorted({f"{h}:{p}/{d}" for h, p, d in places if places.count((h, p, d)) > 1})
    if shared:
        raise UsageError(f"two targets use the same database ({', '.join(shared)})",
                         "each target needs its own database: tdebench drops and re-creates its TPC-H tables")
    unknown = sorted(set(o for o in overrides if o != "all") - set(labels))
    if unknown:
        raise UsageError(f"--override-encryption-check names unknown target(s): {', '.join(unknown)}",
                         f"use one of: {', '.join(labels)} or all")
    configs = []
    for target in targets:
        check_driver(target.kind)
        password = resolve_password(target, interactive)
        override = "all" in overrides or target.label in overrides
        if reach:
            _reach(target, password, override)
        configs.append(target_config(target, override=override))
    return configs


def _reach(target: Target, password: str, override: bool) -> None:
    """Log in once: a wrong host or password, a wrong scheme or a status the login cannot read fail now."""
    from tdebench.engines.external_access import preflight
    from tdebench.engines.external_drivers import connect

    raw = connect(target, password, timeout=10)
    try:
        preflight(target, raw, override)
    finally:
        raw.close()


def check_run_options(cache: str, reset: str) -> None:
    """Cold caches and snapshot resets need a server tdebench controls."""
    if cache != "warm":
        raise UsageError("--cache cold needs a server tdebench can restart; external targets cannot be",
                         "use --cache warm, or restart the servers yourself and run one trial per invocation")
    if reset != "none":
        raise UsageError("--reset snapshot copies data directories; external targets have none tdebench can read",
                         "use --reset none (refresh functions keep twins identical anyway)")


__all__ = ["KINDS", "NOT_SCANNABLE", "Kind", "Target", "TargetConfig", "all_specs", "check_driver",
           "check_run_options", "check_spec", "parse_target", "password_variable", "resolve_password",
           "target_config", "target_configs", "target_of"]
