"""The ``external`` engine: a database server tdebench does not manage, reached by URL.

One config per ``--target LABEL=URL[#SPEC]`` (see :mod:`tdebench.engines.external.target`). tdebench never
starts, stops or restarts such a server and cannot read its files, so:

* before anything is created, the server must be the DBMS its URL names and its login must be able to read the
  encryption status (:mod:`~tdebench.engines.external.access`, with the exact GRANT when it cannot);
* :attr:`ExternalInstance.scannable` is False: there is no data directory to scan; the report says
  "on-disk verification not possible for external targets" and relies on the server's own status;
* the declared encryption is checked against the server's status (:mod:`~tdebench.engines.toolkit.dbapi.status`)
  when the instance starts (server defaults) and after the load (the benchmark tables); a contradiction, or a
  status that cannot be read, refuses the target unless its check was overridden — which is recorded, as is
  the label's status (confirmed / unverifiable / overridden, :mod:`tdebench.results.labels`);
* storage is what the server's catalog reports per table (:meth:`ExternalInstance.catalog_breakdown`);
* the workload talks ``postgres`` (canonical SQL) to the instance and every statement is rewritten for the
  target's dialect (:mod:`~tdebench.engines.toolkit.dbapi.translate`);
* no server processes are visible: CPU/IO of the DBMS cannot be sampled, cold caches and snapshot resets are
  impossible.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from tdebench.api.dialect import Dialect
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.tables import TableSpec
from tdebench.api.threat_probes import ThreatProbes
from tdebench.encryption import EncryptionSpec, parse_spec, redact
from tdebench.engines.external.access import account, grants, preflight
from tdebench.engines.external.configs import target_of
from tdebench.engines.external.connect import connect
from tdebench.engines.external.target import CHECK_OVERRIDDEN, ENGINE, NOT_SCANNABLE, all_specs, resolve_password
from tdebench.engines.toolkit.dbapi import drivers
from tdebench.engines.toolkit.dbapi.kinds import KINDS, kind_dialect
from tdebench.engines.toolkit.dbapi.schema import TranslatedSchemaMixin
from tdebench.engines.toolkit.dbapi.keymgmt import key_management, key_text
from tdebench.engines.toolkit.dbapi.status import (CONFIRMED, CONTRADICTED, PROBES, Finding, Verdict, evaluate,
                                                   label_status)
from tdebench.engines.toolkit.dbapi.translate import TranslatingConnection, Translator, raw_connection
from tdebench.errors import RunFailed, UsageError

ENCRYPTION_WAIT = 300.0
SCHEME_LIMITS = {
    "mysql": "InnoDB encrypts with AES-256 in CBC mode only",
    "mariadb": "key length is set by the key file and not reported, so it is recorded as unverifiable",
    "postgresql": "table encryption needs pg_tde (tde_heap); pgcrypto encrypts values, not tables",
    "mssql": "no mode can be declared (the DEK has none); 3DES needs compatibility level <= 120 from 2016 on",
    "oracle": "no mode can be declared (ENCRYPTION USING takes an algorithm only)",
}
SETTINGS_KEYS = ("url", "label", "encryption_check")
CATALOG_NOTE = ("external targets: sizes as the server's own catalog reports them (tables and indexes); "
                "its files are not visible from here")


class ExternalEngine(Engine):
    """Servers reached by URL (MySQL, MariaDB, PostgreSQL, SQL Server, Oracle)."""

    name = ENGINE
    dialect = Dialect("postgres", "a server reached by URL", "by URL", "format", translated=True)  # per target
    remote = True
    description = ("a server tdebench does not manage, by URL: mysql://, mariadb://, postgresql://, mssql://, "
                   "oracle:// (--target LABEL=URL#SPEC); encryption as the server reports it")

    def supported_specs(self) -> list[EncryptionSpec]:
        return all_specs()

    def default_encrypted_spec(self) -> EncryptionSpec:
        return parse_spec("tde:aes-256-cbc")

    def spec_notes(self) -> list[str]:
        """What each URL scheme can declare (``tdebench engines``): the limits are the DBMS's own."""
        return [f"{kind.scheme}://: {', '.join(str(s) for s in kind.specs)}, fs:* (needs the override flag)"
                + (f" -- {SCHEME_LIMITS[kind.scheme]}" if kind.scheme in SCHEME_LIMITS else "")
                for kind in KINDS.values()]

    def check_available(self) -> None:
        """Nothing to find locally; each target's driver is checked when its config is built."""

    def version(self) -> str:
        return "external server (its version is recorded per target as settings.server_version)"

    def validate_settings(self, settings: dict[str, str]) -> None:
        unknown = sorted(set(settings) - set(SETTINGS_KEYS))
        if unknown:
            raise UsageError(f"external targets take no server settings ({', '.join(unknown)})",
                             "configure the server yourself; give targets with --target LABEL=URL#SPEC")

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "ExternalInstance":
        """The database is the one in the target's URL (reserved for tdebench), whatever ``database`` says."""
        self.validate_settings(dict(config.settings))
        return ExternalInstance(config, workdir)


class ExternalThreats(ThreatProbes["ExternalInstance"]):
    """What a server tdebench does not manage tells the threat model: its key management, as it reports it."""

    def key_storage(self) -> list[dict[str, Any]] | None:
        """The key management the server reports (:mod:`tdebench.engines.toolkit.dbapi.keymgmt`); its files are out
        of reach, so nothing about them is claimed."""
        target = self.instance
        return [{"key": e["mechanism"], "where": e.get("keys"), "on_disk": None, "beside_data": None, "mode": None,
                 "protected_by": None, "found_in_clear": [], "not_shown": e.get("not_shown")}
                for e in target.key_management] if target._started else None


class ExternalInstance(TranslatedSchemaMixin, Instance):
    """One target: connections, loading in its dialect, and its encryption as the server reports it."""

    scannable: ClassVar[bool] = False
    scan_note: ClassVar[str] = NOT_SCANNABLE

    def __init__(self, config: Config, workdir: Path) -> None:
        self.target = target_of(config)
        super().__init__(config, workdir, self.target.database)
        self.kind = self.target.kind
        self.dialect = kind_dialect(self.kind)
        self.override = config.settings.get("encryption_check") == CHECK_OVERRIDDEN
        self.translator = Translator(self.kind.dialect)
        self.facts: dict[str, Any] = {}
        self.load_methods: set[str] = set()
        self.checks: dict[str, dict[str, Any]] = {}   # phase -> what was found and decided
        self._loaded = False
        self._started = False
        self.key_management: list[dict[str, Any]] = []

    # lifecycle: nothing to start or stop -------------------------------------------------------------------
    def start(self) -> None:
        """Connect once, record the server's facts and refuse a target whose server contradicts its label."""
        if self._started:
            return
        raw = self._raw()
        try:
            self.facts = drivers.session_facts(self.kind, raw)
            self.facts.update(preflight(self.target, raw, self.override))  # before the schema is created
            finding = PROBES[self.kind.scheme](raw, None)
            self.key_management = key_management(self.kind.scheme, raw)  # where the keys live, as it says
        finally:
            raw.close()
        self._decide("start", finding)
        self._started = True

    def stop(self) -> None:
        """Connections are closed after each use; the server is not ours to stop."""

    def restart(self) -> None:
        """Nothing to restart (cold-cache runs are refused for external targets)."""

    def destroy(self) -> None:
        """Drop the benchmark tables again unless the run keeps its data (``--keep``)."""
        if self.config.keep or not self._loaded:
            return
        try:
            raw = self._raw()
        except Exception:  # noqa: BLE001 - cleanup is best effort
            return
        try:
            self.drop_all(raw)
        except Exception:  # noqa: BLE001
            pass
        finally:
            raw.close()

    def snapshot(self, target: Path) -> None:
        raise UsageError(f"{self.config.label}: snapshots need the data directory of a server tdebench manages",
                         "use --reset none with external targets")

    restore = snapshot  # type: ignore[assignment]

    def alive(self) -> bool:
        try:
            self._raw(timeout=5).close()
        except Exception:  # noqa: BLE001 - unreachable counts as gone
            return False
        return True

    def interrupt(self, conn: Connection) -> None:
        drivers.cancel(self.kind, raw_connection(conn), self._raw)

    # use ---------------------------------------------------------------------------------------------------
    def _raw(self, timeout: int = 15) -> Any:
        return connect(self.target, resolve_password(self.target), timeout=timeout)

    def connect(self) -> Connection:
        raw = self._raw()
        return raw if self.translator.identity else TranslatingConnection(raw, self.translator)

    def create_schema(self, conn: Connection, statements: Sequence[str], tables: Sequence[TableSpec] = ()) -> None:
        super().create_schema(conn, statements, tables)
        self._loaded = True

    def plant_canaries(self, markers: list[str]) -> None:
        """Not done: nothing could look for them (the server's files are out of reach)."""

    # facts -------------------------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path | None:  # type: ignore[override]
        """None: the server's files are not readable from here (see :attr:`scannable`)."""
        return None

    def server_pids(self) -> list[int]:
        return []

    def storage_bytes(self) -> int:
        """Bytes of the benchmark database's tables and indexes as the server's catalog reports them (not files)."""
        raw = self._raw()
        try:
            return drivers.storage_bytes(self.kind, raw)
        finally:
            raw.close()

    def catalog_sizes(self, tables: Sequence[str]) -> dict[str, dict[str, int]]:
        """Per table: rows, table/index/total bytes from the target's own catalog."""
        raw = self._raw()
        try:
            return drivers.table_sizes(self.kind, raw, list(tables))
        finally:
            raw.close()

    def catalog_breakdown(self, tables: list[str] | None = None) -> dict[str, Any]:
        """The storage breakdown of the benchmark tables: catalog sizes, no data directory (none is visible)."""
        sizes = self.catalog_sizes(list(tables) if tables else list(self.tables))
        keys = ("table_bytes", "index_bytes", "total_bytes")
        return {"tables": sizes, "totals": {k: sum(t[k] for t in sizes.values()) for k in keys},
                "data_dir_bytes": None, "scope": "catalog", "method": drivers.SIZE_METHODS[drivers.family(self.kind)],
                "note": CATALOG_NOTE}

    def storage_breakdown(self) -> dict[str, Any]:
        """What the run records as this target's storage (see :meth:`catalog_breakdown`)."""
        return self.catalog_breakdown(None)

    def settings(self) -> dict[str, Any]:
        """The target as recorded: URL without password, server facts, declared and found encryption."""
        return {"target": self.target.label, "url": self.target.url, "scheme": self.kind.scheme,
                "dialect": self.kind.dialect, **self.facts, "declared_encryption": str(self.config.spec),
                "encryption_check": "overridden" if self.override else "required",
                "load": ", ".join(sorted(self.load_methods)) or "not loaded yet", "at_rest_scan": NOT_SCANNABLE,
                "storage": "catalog sizes (the server's files are not visible)",
                "sql_rewrites": dict(self.translator.sources),
                "encryption_verdicts": "; ".join(f"{phase}: {c['verdict']} ({c['found']})"
                                                 for phase, c in self.checks.items()) or "not checked yet",
                "key_management": key_text(self.key_management),
                **self._label_settings()}

    def _label_settings(self) -> dict[str, str]:
        """The label status of the last check (``label_status``, ``label_note``) for the manifest."""
        last = next(reversed(self.checks.values()), None) if self.checks else None
        return {k: last[k] for k in ("label_status", "label_note") if last and k in last}

    @property
    def server_version(self) -> str:
        return str(self.facts.get("server_version", ""))

    def _settled(self, tables: list[str] | None, timeout: float = ENCRYPTION_WAIT) -> Finding:
        """A finding, re-read while the server reports encryption in progress (up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            raw = self._raw()
            try:
                finding = PROBES[self.kind.scheme](raw, tables)
            finally:
                raw.close()
            if finding.state != "pending" or time.monotonic() > deadline:
                return finding
            time.sleep(1.0)

    def encryption_status(self) -> dict[str, Any]:
        """What the server says, the verdict on the declared spec, and whether the check was overridden."""
        phase = "tables" if self._loaded else "start"
        finding = self._settled(list(self.tables) if self._loaded else None)
        verdict = evaluate(self.config.spec, finding)
        self.checks[phase] = self._record(finding, verdict)
        return self.checks[phase]

    def check_encrypted(self, schema_tables: list[str]) -> None:
        """Refuse the target unless the server confirms the declared encryption of the benchmark tables."""
        self._decide("tables", self._settled(list(schema_tables) or list(self.tables)))

    def _record(self, finding: Finding, verdict: Verdict) -> dict[str, Any]:
        """The status as recorded in verification.json (flat, so reports can show it in one cell)."""
        entry: dict[str, Any] = {
            "enabled": finding.state == "yes", "declared": str(self.config.spec), "server": finding.server,
            "found": finding.state, "cipher": finding.cipher, "key_bits": finding.key_bits, "mode": finding.mode,
            "tables": tables_text(finding.tables), "verdict": verdict.state, "reasons": "; ".join(verdict.reasons),
            "evidence": evidence_text(finding.details),
            "check": "overridden" if self.override else "required", "at_rest_scan": NOT_SCANNABLE,
            "key_management": key_text(self.key_management)}
        if verdict.state != CONFIRMED and self.override:
            entry["override"] = (f"label kept although the server's status is {verdict.state}: "
                                 "--override-encryption-check was given")
        entry["label_status"], entry["label_note"] = label_status(verdict, self.override)
        return {k: v for k, v in entry.items() if v is not None and v != ""}

    def threats(self) -> "ExternalThreats":
        return ExternalThreats(self)

    def _decide(self, phase: str, finding: Finding) -> None:
        verdict = evaluate(self.config.spec, finding)
        self.checks[phase] = self._record(finding, verdict)
        if verdict.state == CONFIRMED or self.override:
            return
        what = "contradicts" if verdict.state == CONTRADICTED else "does not confirm"
        fix = f"{verdict.fix}; or " if verdict.fix else ""
        if finding.denied:  # the status could not be read: the grant is the fix, not another label
            fix = f"as an administrator run {'; '.join(self._grants(finding.denied))}; or "
        raise RunFailed(f"target '{self.config.label}' is declared {self.config.spec}, but {finding.server} "
                        f"{what} it: {redact('; '.join(verdict.reasons[:4]))}",
                        f"{fix}correct the #SPEC of the target, or give --override-encryption-check "
                        f"{self.config.label} to keep the label anyway (marked 'overridden, not confirmed' "
                        "in every result)")

    def _grants(self, denied: list[str]) -> list[str]:
        raw = self._raw()
        try:
            return grants(self.kind.scheme, denied, account(self.kind.scheme, raw, self.target)) or [
                f"a grant that lets the login read {', '.join(denied)}"]
        finally:
            raw.close()


def tables_text(tables: dict[str, bool | None]) -> str | None:
    """``8 of 8 encrypted`` (plus the plain or unknown ones when not all are)."""
    if not tables:
        return None
    yes = [t for t, v in tables.items() if v]
    text = f"{len(yes)} of {len(tables)} encrypted"
    plain = [t for t, v in tables.items() if v is False]
    unknown = [t for t, v in tables.items() if v is None]
    if yes and plain:
        text += f"; plain: {', '.join(plain)}"
    if unknown:
        text += f"; unknown: {', '.join(unknown)}"
    return text


_NOISE = ("innodb_encryption_rotate_key_age", "innodb_encryption_rotation_iops")


def evidence_text(details: dict[str, Any], prefix: str = "") -> str:
    """The server facts a verdict rests on as ``name=value`` pairs (nested dicts flattened, empty ones left out)."""
    parts = []
    for key, value in details.items():
        if value is None or value == {} or key in _NOISE:
            continue
        if isinstance(value, dict):
            inner = evidence_text(value, "" if key in ("variables", "tablespaces") else f"{key}.")
            if inner:
                parts.append(inner)
        else:
            parts.append(f"{prefix}{key}={value}")
    return ", ".join(parts)


__all__ = ["ExternalEngine", "ExternalInstance", "evidence_text", "tables_text"]
