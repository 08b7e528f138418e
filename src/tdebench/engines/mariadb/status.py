"""What a MariaDB instance says about itself: settings, encryption status (plugin, variables, tablespaces), whether
every tablespace is encrypted as configured, background encryption work, and flushing dirty pages to disk.

A mixin of :class:`tdebench.engines.mariadb.engine.MariadbInstance`: it uses the instance's ``config``,
``database``, ``options``, ``encrypted``, key material (``_keys``), ``connect`` and connection facts.
"""

from __future__ import annotations

import contextlib
import pwd
import time
from collections.abc import Callable
from typing import Any

from tdebench.api.engine import Config, Connection
from tdebench.engines.mariadb import settings as ms
from tdebench.engines.mariadb.keys import KeyMaterial
from tdebench.engines.mariadb.support import close_quietly
from tdebench.errors import EnvironmentProblem, RunFailed

ENCRYPTION_WAIT = 300.0
FLUSH_IO_CAPACITY = 100_000  # pages a second the page cleaner may write while flush_to_disk waits for it
ROTATION_GRACE = 20.0
_TABLESPACES_SQL = (
    "SELECT t.name, e.encryption_scheme, e.current_key_id, e.min_key_version, e.key_rotation_page_number, "
    "e.rotating_or_flushing FROM information_schema.innodb_sys_tablespaces t "
    "LEFT JOIN information_schema.innodb_tablespaces_encryption e ON e.space = t.space "
    "UNION SELECT e.name, e.encryption_scheme, e.current_key_id, e.min_key_version, e.key_rotation_page_number, "
    "e.rotating_or_flushing FROM information_schema.innodb_tablespaces_encryption e WHERE e.space = 0"
)


class MariadbStatus:
    """settings / encryption_status / check_encrypted / background_work / flush_to_disk of a MariaDB instance."""

    config: Config
    database: str
    options: dict[str, str]
    encrypted: bool
    key_plugin: str
    key_settings: dict[str, str]
    _key_plugin_options: Callable[..., dict[str, str]]
    user: pwd.struct_passwd | None
    _keys: KeyMaterial | None
    _port: int | None
    connect: Callable[[], Connection]

    def flush_to_disk(self) -> None:
        """Write every dirty InnoDB page to its file (max dirty pages 0 until none is left), flush Aria/MyISAM."""
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm, "
                        "@@GLOBAL.innodb_io_capacity, @@GLOBAL.innodb_io_capacity_max")
            pct, lwm, capacity, capacity_max = cur.fetchone()
            restore = (f"SET GLOBAL innodb_max_dirty_pages_pct = {float(pct)}, "
                       f"innodb_max_dirty_pages_pct_lwm = {float(lwm)}, "
                       f"innodb_io_capacity = {int(capacity)}, innodb_io_capacity_max = {int(capacity_max)}")
            # the page cleaner writes at most innodb_io_capacity pages a second: lifted for this one flush
            cur.execute(f"SET GLOBAL innodb_io_capacity_max = {FLUSH_IO_CAPACITY}, "
                        f"innodb_io_capacity = {FLUSH_IO_CAPACITY}, "
                        "innodb_max_dirty_pages_pct_lwm = 0.001, innodb_max_dirty_pages_pct = 0")
            try:
                self._wait_no_dirty_pages(cur, timeout=300.0)
            except BaseException:
                with contextlib.suppress(Exception):  # keep the original error (e.g. Ctrl-C mid-read)
                    cur.execute(restore)
                raise
            cur.execute(restore)
            cur.execute("FLUSH TABLES")
        finally:
            close_quietly(conn)

    def _wait_no_dirty_pages(self, cur: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")
            if int(cur.fetchone()[1]) == 0:
                return
            time.sleep(0.2)
        raise EnvironmentProblem(f"{self.config.label}: dirty pages were not flushed within {timeout:.0f} s",
                                 "the disk is too slow or the server is stuck")

    # facts -------------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """Server options as configured (no paths, keys or passwords) and the encryption facts."""
        out: dict[str, Any] = dict(self.options)
        out["listen"] = "127.0.0.1 (tcp)" if self._port else "unix socket only"
        out["service_user"] = self.user.pw_name if self.user else "(current user)"
        enc = ms.encryption_options(self.config.spec, self._key_plugin_options(placeholders=True),
                                    ms.binlog_on(self.options))
        for key in ("file_key_management_filename", "file_key_management_filekey"):
            enc.pop(key, None)
        out.update(enc)
        if self.encrypted:
            out["encryption_scope"] = ms.SCOPES[self.config.spec.scope]
            out["key_bits"] = self.config.spec.key_bits
        else:
            out["encryption_scope"] = "none"
        if self._keys is not None:
            out["key_file"] = "keys 1 and 2, encrypted (AES-256-CBC) with a random file key kept in memory and tmpfs"
        return out

    def _query(self, cur: Any, sql: str) -> list[tuple[Any, ...]]:
        cur.execute(sql)
        return list(cur.fetchall())

    def _tablespaces(self, cur: Any) -> dict[str, dict[str, Any]]:
        """Every InnoDB tablespace with its encryption facts (none listed = never encrypted)."""
        rows = self._query(cur, _TABLESPACES_SQL)
        return {r[0]: {"scheme": int(r[1] or 0), "key_id": None if r[2] is None else int(r[2]),
                       "min_key_version": int(r[3] or 0), "rotating": r[4] is not None or bool(r[5])}
                for r in rows}

    def encryption_status(self) -> dict[str, Any]:
        """What the server says: plugin, encryption variables, tablespaces of the benchmark schema."""
        return self._collect_status()[0]

    def background_work(self) -> list[str]:
        """Tablespaces the encryption threads are still encrypting, rotating or flushing (encrypted configs)."""
        if not self.encrypted:
            return []
        conn = self.connect()
        try:
            spaces = self._tablespaces(conn.cursor())
        finally:
            close_quietly(conn)
        rotating = sorted(n for n, s in spaces.items() if s["rotating"])
        return [f"encryption threads working on {', '.join(rotating[:3])}"
                + (f" (+{len(rotating) - 3} more)" if len(rotating) > 3 else "")] if rotating else []

    def _collect_status(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            plugin = self._query(cur, "SELECT plugin_status FROM information_schema.plugins "
                                      f"WHERE plugin_name = '{self.key_plugin}'")
            variables = dict(self._query(cur, "SHOW GLOBAL VARIABLES WHERE Variable_name LIKE '%encrypt%' "
                                              "OR Variable_name = 'file_key_management_encryption_algorithm' "
                                              "OR Variable_name LIKE 'hashicorp_key_management_cache%'"))
            spaces = self._tablespaces(cur)
        finally:
            close_quietly(conn)
        ours = {n: s for n, s in spaces.items() if n.startswith(f"{self.database}/")}
        active = bool(plugin) and plugin[0][0] == "ACTIVE"
        status = {
            "enabled": active and str(variables.get("innodb_encrypt_tables", "OFF")).upper() in ("ON", "FORCE"),
            "plugin": plugin[0][0] if plugin else "not loaded",
            "key_plugin": self.key_plugin if self.encrypted else None,
            "scope": str(self.config.spec.scope or "all") if self.encrypted else "none",
            "key_bits": self.config.spec.key_bits if self.encrypted else None,
            "variables": {k: str(v) for k, v in sorted(variables.items())},
            "tablespaces": {
                "schema": self.database,
                "total": len(ours),
                "encrypted": sorted(n for n, s in ours.items() if s["scheme"] == 1),
                "unencrypted": sorted(n for n, s in ours.items() if s["scheme"] != 1),
                "rotating": sorted(n for n, s in spaces.items() if s["rotating"]),
                "key_ids": sorted({s["key_id"] for s in ours.values() if s["key_id"] is not None}),
                "system_tablespace_encrypted": spaces.get("innodb_system", {}).get("scheme") == 1,
            },
        }
        return status, spaces

    def _encryption_problems(self, tables: list[str]) -> tuple[list[str], bool]:
        """(problems, worth waiting): variables/plugin mismatches are final, rotation in progress is not."""
        status, spaces = self._collect_status()
        if status["plugin"] != "ACTIVE":
            return [f"the {self.key_plugin} plugin is {status['plugin']}"], False
        expected = ms.encryption_options(self.config.spec, self._key_plugin_options(placeholders=True),
                                         ms.binlog_on(self.options))
        actual = status["variables"]
        problems = [f"{key} is {actual[key]}, expected {value}" for key, value in expected.items()
                    if key in actual and actual[key].upper() != value.upper()]
        if problems:
            return problems, False
        names = sorted({n for n in spaces if n.startswith(f"{self.database}/")}
                       | {f"{self.database}/{t.lower()}" for t in tables})
        if self.config.spec.scope in ("", "innodb"):
            names.append("innodb_system")
        for name in names:
            row = spaces.get(name)
            if row is None:
                problems.append(f"{name}: no InnoDB tablespace (not an InnoDB file-per-table table?)")
            elif row["scheme"] != 1 or row["min_key_version"] < 1:
                problems.append(f"{name}: not encrypted (ENCRYPTION_SCHEME={row['scheme']}, "
                                f"MIN_KEY_VERSION={row['min_key_version']})")
            elif row["rotating"]:
                problems.append(f"{name}: encryption threads are still rotating it")
            elif row["key_id"] != 1:
                problems.append(f"{name}: encrypted with key {row['key_id']}, expected key 1")
        return problems, True

    def check_encrypted(self, schema_tables: list[str], timeout: float = ENCRYPTION_WAIT,
                        grace: float = ROTATION_GRACE) -> None:
        """RunFailed unless every tablespace of the schema is encrypted with key 1.

        Waits while the encryption threads are rotating some tablespace (up to ``timeout``), and for
        ``grace`` seconds for them to pick up a tablespace; a wrong variable or plugin fails at once.
        """
        if not self.encrypted:
            return
        started = time.monotonic()
        while True:
            problems, wait = self._encryption_problems(schema_tables)
            if not problems:
                return
            elapsed = time.monotonic() - started
            rotating = any("rotating" in p for p in problems)
            if not wait or elapsed > timeout or (not rotating and elapsed > grace):
                raise RunFailed(f"{self.config.label} is not encrypted as configured: {'; '.join(problems[:5])}"
                                + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""),
                                "this config is not measured; check the server log and the encryption settings")
            time.sleep(0.5)


__all__ = ["MariadbStatus"]
