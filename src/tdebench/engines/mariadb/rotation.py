"""MariaDB's rotation by key version (:class:`tdebench.api.keys.KeyRotation`), for twins whose keys live on a key
server (``hashicorp_key_management``: key versions are the KV secret's versions).

Once the newest version of a key is more than ``innodb_encryption_rotate_key_age`` versions ahead of a tablespace's
(``information_schema.INNODB_TABLESPACES_ENCRYPTION.MIN_KEY_VERSION``), the ``innodb_encryption_threads`` re-encrypt
its pages under the newest, while the server serves; the plugin notices a new version when its
``hashicorp_key_management_cache_version_timeout`` has passed. Measured here (MariaDB 10.11.19): with the default
age of 1 a single new version re-encrypts nothing; age 0 turns rotation off.

The threads do not cover everything a key encrypts. The redo log keeps the version it was created with: with that
version destroyed the server does not start ("Obtaining redo log encryption key version 1 failed"); a start with
another ``innodb_log_file_size`` re-creates it under the newest. Aria tables encrypted by ``aria_encrypt_tables``
(the ``mysql`` schema's among them: with their version gone every login is refused) keep the version they were
written with until rebuilt. :meth:`MariadbRotation.finish` does both, the restart interrupting the service.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tdebench.api.keys import KeyRotation
from tdebench.api.switch import SwitchProgress
from tdebench.engines.mariadb.support import close_quietly

MIB = 1 << 20
_SPACES = ("SELECT name, current_key_id, min_key_version, rotating_or_flushing OR key_rotation_page_number IS NOT NULL "
           "FROM information_schema.innodb_tablespaces_encryption WHERE encryption_scheme = 1 "
           "AND name <> 'innodb_temporary'")  # the temporary tablespace is re-created at every start
_ARIA = ("SELECT table_schema, table_name FROM information_schema.tables WHERE engine = 'Aria' AND "
         "table_type = 'BASE TABLE' AND table_schema NOT IN ('information_schema', 'performance_schema')")
_TABLES = ("SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND "
           "table_schema NOT IN ('information_schema', 'performance_schema', 'sys')")
_COUNTERS = ("innodb_encryption_rotation_pages_modified", "innodb_encryption_rotation_pages_flushed",
             "innodb_encryption_num_key_requests")


class MariadbRotation(KeyRotation):
    """Rotation of one MariaDB instance (a :class:`~tdebench.engines.mariadb.engine.MariadbInstance`)."""

    def __init__(self, instance: Any) -> None:
        self.instance = instance
        self.first_log_size: int | None = None  # the redo log's size before the first rotation
        self._redo_renewed = self._aria_renewed = False  # by finish(), since the rotation started

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        conn = self.instance._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return list(cur.fetchall())
        finally:
            close_quietly(conn)

    def _value(self, name: str) -> str:
        return str(self._rows(f"SELECT @@GLOBAL.{name}")[0][0])

    def _on(self, name: str) -> bool:
        """A boolean server variable (the server answers 1/0 or ON/OFF)."""
        return self._value(name).upper() in ("1", "ON")

    def versions_in_use(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for _, key_id, version, _ in self._rows(_SPACES):
            out[int(key_id)] = min(out.get(int(key_id), int(version)), int(version))
        return out

    def age(self) -> int:
        return int(self._value("innodb_encryption_rotate_key_age"))

    def start(self, threads: int) -> dict[str, Any]:
        self._redo_renewed = self._aria_renewed = False
        conn = self.instance._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            cur.execute(f"SET GLOBAL innodb_encryption_threads = {int(threads)}")
        finally:
            close_quietly(conn)
        self.instance._persist({"innodb_encryption_threads": str(int(threads))})
        return {"innodb_encryption_threads": int(threads), "innodb_encryption_rotate_key_age": self.age(),
                "hashicorp_key_management_cache_version_timeout":
                    int(self._value("hashicorp_key_management_cache_version_timeout"))}

    def progress(self, targets: dict[int, int]) -> SwitchProgress:
        spaces = self._rows(_SPACES)
        behind = [(str(n), bool(r)) for n, k, v, r in spaces if int(v) < targets.get(int(k), 0) or r]
        status = dict(self._rows("SHOW GLOBAL STATUS WHERE Variable_name IN ("
                                 + ", ".join(f"'{c}'" for c in _COUNTERS) + ")"))
        counters = {str(k).lower(): float(v) for k, v in status.items()}
        return SwitchProgress(not behind, len(spaces) - len(behind), len(spaces), tuple(n for n, _ in behind[:5]),
                              {"rotating": sum(r for _, r in behind)}, counters, _COUNTERS[:2])

    def left_behind(self, targets: dict[int, int]) -> list[str]:
        out = [f"tablespace {n} (key {k} version {v})" for n, k, v, _ in self._rows(_SPACES)
               if int(v) < targets.get(int(k), 0)]
        out += [f"{part} (written before the rotation, under an older version)" for part in self._unrotated()]
        return out

    def _unrotated(self) -> list[str]:
        """What the encryption threads leave under the version it was written with, as the server is set now."""
        out = ["the redo log"] if self._on("innodb_encrypt_log") and not self._redo_renewed else []
        if self._on("aria_encrypt_tables") and not self._aria_renewed:
            out += [f"Aria table {s}.{t}" for s, t in self._rows(_ARIA)]
        return out

    def finish(self, step: Callable[[str], None]) -> dict[str, Any]:
        """The redo log re-created by a restart with ``innodb_log_file_size`` one MiB off (back again next time),
        and every Aria table rebuilt (``ALTER TABLE ... ENGINE=Aria``)."""
        facts: dict[str, Any] = {}
        if self._on("innodb_encrypt_log"):
            step("redo_log_restart")
            size = int(self._value("innodb_log_file_size"))
            first = self.first_log_size = self.first_log_size or size
            new = first + MIB if size == first else first
            self.instance.stop()
            self.instance.options["innodb_log_file_size"] = str(new)
            self.instance._path("my.cnf").write_text(self.instance._render_cnf())
            self.instance.start()
            facts["redo_log"] = f"re-created by a restart with innodb_log_file_size={new}"
            self._redo_renewed = True
        if self._on("aria_encrypt_tables"):
            step("aria_rebuild")
            tables = self._rows(_ARIA)
            conn = self.instance._connect(timeout=10, use_database=False)
            try:
                cur = conn.cursor()
                for schema, table in tables:
                    cur.execute(f"ALTER TABLE `{schema}`.`{table}` ENGINE=Aria")
            finally:
                close_quietly(conn)
            facts["aria_tables_rebuilt_count"] = len(tables)
            self._aria_renewed = True
        return facts

    def table_sums(self) -> dict[str, str]:
        """``rows=<COUNT(*)> checksum=<CHECKSUM TABLE>`` per table of the user databases (every row read)."""
        out = {}
        conn = self.instance._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            for schema, table in self._rows(_TABLES):
                name = f"`{schema}`.`{table}`"
                cur.execute(f"SELECT COUNT(*) FROM {name}")
                rows = int(cur.fetchone()[0])
                cur.execute(f"CHECKSUM TABLE {name}")
                out[f"{schema}.{table}"] = f"rows={rows} checksum={cur.fetchone()[1]}"
        finally:
            close_quietly(conn)
        return out

    def read_all(self) -> dict[str, Any]:
        self.instance.stop()
        self.instance.start()
        sums = self.table_sums()
        return {"tables_read": len(sums),
                "rows_read": sum(int(v.split()[0].partition("=")[2]) for v in sums.values())}
