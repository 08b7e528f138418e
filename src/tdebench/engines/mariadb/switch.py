"""MariaDB's online switch: existing InnoDB tablespaces encrypted (or decrypted) in place by the encryption threads.

A DBA turns encryption on in a running MariaDB whose key plugin is loaded with ``SET GLOBAL innodb_encrypt_tables``;
``innodb_encryption_threads`` background threads then rewrite every page of every tablespace, at most
``innodb_encryption_rotation_iops`` page operations a second, while the server serves. Progress is the server's own:
``information_schema.INNODB_TABLESPACES_ENCRYPTION`` (``ENCRYPTION_SCHEME`` 1 and ``MIN_KEY_VERSION`` >= 1 once a
tablespace is encrypted, ``KEY_ROTATION_PAGE_NUMBER`` / ``ROTATING_OR_FLUSHING`` while the threads work on it) and
the ``Innodb_encryption_rotation_*`` status counters.

The key plugin (and the options only a restart can change: redo log, temporary files) comes from the spec; the
instance starts with ``innodb_encrypt_tables`` on, so :meth:`start_plain` turns it off and waits until the threads
have decrypted what ``mariadb-install-db`` wrote, before any data is loaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.errors import EnvironmentProblem, RunFailed

PLAIN_WAIT = 300.0
REKEY_IDS = (1, 3)  # re-keying alternates between these key ids of the key file (keys.KEY_IDS)
# every InnoDB table of the server's user databases (the workload's own first) with its key id
_TABLE_KEYS_SQL = (
    "SELECT t.table_schema, t.table_schema = DATABASE(), t.table_name, e.current_key_id "
    "FROM information_schema.tables t LEFT JOIN information_schema.innodb_tablespaces_encryption e "
    "ON e.name = concat(t.table_schema, '/', t.table_name) "
    "WHERE t.table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') "
    "AND t.engine = 'InnoDB' AND t.table_type = 'BASE TABLE' ORDER BY 2 DESC, 1, 3")
# cumulative counts of the encryption threads' work; the page counters move only while tablespaces are rotated
_PAGE_COUNTERS = ("innodb_encryption_rotation_pages_read_from_cache", "innodb_encryption_rotation_pages_read_from_disk",
                  "innodb_encryption_rotation_pages_modified", "innodb_encryption_rotation_pages_flushed")
_COUNTERS = (*_PAGE_COUNTERS, "innodb_encryption_num_key_requests")
_GAUGES = ("innodb_encryption_rotation_estimated_iops",)
# encrypted by innodb_encrypt_temporary_tables (a restart option) as pages are written, never by the threads
_NOT_ROTATED = ("innodb_temporary",)
# every InnoDB tablespace the server knows (file-per-table and system), with its encryption row if any
_SPACES_SQL = (
    "SELECT t.name, e.encryption_scheme, e.min_key_version, e.key_rotation_page_number, e.rotating_or_flushing "
    "FROM information_schema.innodb_sys_tablespaces t "
    "LEFT JOIN information_schema.innodb_tablespaces_encryption e ON e.space = t.space "
    "UNION SELECT e.name, e.encryption_scheme, e.min_key_version, e.key_rotation_page_number, "
    "e.rotating_or_flushing FROM information_schema.innodb_tablespaces_encryption e WHERE e.space = 0"
)


def classify(rows: list[tuple[Any, ...]], on: bool) -> SwitchProgress:
    """Progress from ``_SPACES_SQL`` rows: a tablespace is in the target state when encrypted (scheme 1, key
    version >= 1) for ``on``, else plaintext (no row or scheme 0), and in either case not being rotated."""
    in_target, pending = 0, []
    rows = [r for r in rows if r[0] not in _NOT_ROTATED]
    for name, scheme, min_version, page, rotating in rows:
        encrypted = int(scheme or 0) == 1 and int(min_version or 0) >= 1
        busy = page is not None or bool(rotating)
        if encrypted == on and not busy:
            in_target += 1
        else:
            pending.append(str(name))
    return SwitchProgress(done=not pending and bool(rows), in_target=in_target, total=len(rows),
                          pending=tuple(sorted(pending)[:5]), detail={"tablespaces_pending": len(pending)})


class MariadbSwitch:
    """Mixin of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`: the online switch."""

    def _switch_cursor_run(self, statements: list[str]) -> list[tuple[Any, ...]]:
        conn = self._connect(timeout=10, use_database=False)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            rows: list[tuple[Any, ...]] = []
            for sql in statements:
                cur.execute(sql)
                rows = list(cur.fetchall())
            return rows
        finally:
            conn.close()

    def _persist(self, values: dict[str, str]) -> None:
        """Write the switch's settings into my.cnf too, so that a restart (crash recovery, ``--restart-twins``)
        keeps the state the switch reached, as a DBA would."""
        path = self._path("my.cnf")  # type: ignore[attr-defined]
        lines = [line for line in path.read_text().splitlines() if line.partition("=")[0] not in values]
        path.write_text("\n".join(lines + [f"{k}={v}" for k, v in values.items()]) + "\n")

    def start_plain(self) -> dict[str, Any]:
        """``innodb_encrypt_tables`` off, and wait until the threads decrypted the system tables; the threads are
        then stopped (0) so that the baseline runs without them."""
        if not self.encrypted:  # type: ignore[attr-defined]
            return {"start": "plain server (no key plugin)"}
        self._switch_cursor_run(["SET GLOBAL innodb_encryption_threads = 4", "SET GLOBAL innodb_encrypt_tables = OFF"])
        deadline = time.monotonic() + PLAIN_WAIT
        while not (progress := self.encryption_progress(on=False)).done:
            if time.monotonic() > deadline:
                raise EnvironmentProblem(f"{self.config.label}: the encryption threads did not decrypt the system "  # type: ignore[attr-defined]
                                         f"tablespaces within {PLAIN_WAIT:.0f} s ({', '.join(progress.pending)})",
                                         "look at the server log")
            time.sleep(0.2)
        self._switch_cursor_run(["SET GLOBAL innodb_encryption_threads = 0"])
        self._persist({"innodb_encrypt_tables": "OFF", "innodb_encryption_threads": "0"})
        return {"start": "key plugin loaded, innodb_encrypt_tables=OFF, every tablespace plaintext",
                "tablespaces": progress.total}

    def switch_encryption(self, on: bool, threads: int, iops: int | None = None) -> dict[str, Any]:
        """``innodb_encryption_rotation_iops``, ``innodb_encrypt_tables`` ON/OFF, then ``innodb_encryption_threads`` (which
        starts the work)."""
        statements = [f"SET GLOBAL innodb_encryption_rotation_iops = {int(iops)}"] if iops else []
        statements += [f"SET GLOBAL innodb_encrypt_tables = {'ON' if on else 'OFF'}",
                       f"SET GLOBAL innodb_encryption_threads = {int(threads)}",
                       "SELECT @@innodb_encrypt_tables, @@innodb_encryption_threads, @@innodb_encryption_rotation_iops"]
        row = self._switch_cursor_run(statements)[0]
        self._persist({"innodb_encrypt_tables": str(row[0]), "innodb_encryption_threads": str(int(row[1])),
                       "innodb_encryption_rotation_iops": str(int(row[2]))})
        return {"innodb_encrypt_tables": str(row[0]), "innodb_encryption_threads": int(row[1]),
                "innodb_encryption_rotation_iops": int(row[2])}

    def encryption_progress(self, on: bool = True) -> SwitchProgress:
        """Tablespaces in the target state (:func:`classify`) and the rotation counters."""
        conn = self._connect(timeout=10, use_database=False)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            cur.execute(_SPACES_SQL)
            rows = list(cur.fetchall())
            names = ", ".join(f"'{c}'" for c in (*_COUNTERS, *_GAUGES))
            cur.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
            status = {str(k).lower(): float(v) for k, v in cur.fetchall()}
        finally:
            conn.close()
        progress = classify(rows, on)
        return SwitchProgress(progress.done, progress.in_target, progress.total, progress.pending,
                              {**progress.detail, **{k: v for k, v in status.items() if k in _GAUGES}},
                              {k: v for k, v in status.items() if k in _COUNTERS}, _PAGE_COUNTERS)

    def rekey(self, step: Callable[[str], None]) -> dict[str, Any]:
        """``ALTER TABLE ... ENCRYPTION_KEY_ID=k`` for every InnoDB table of the server's user databases (the
        workload's own first, named bare; the others as ``<database>.<table>``), one after the other,
        while the server serves: each is rebuilt (online DDL) with its pages encrypted under key ``k``, the other
        of :data:`REKEY_IDS` than most tables use now. The key id per tablespace afterwards is the server's own
        (``INNODB_TABLESPACES_ENCRYPTION.CURRENT_KEY_ID``)."""
        before = self._table_keys()
        current = [k for k in before.values() if k is not None]
        target = REKEY_IDS[1] if current.count(REKEY_IDS[0]) >= current.count(REKEY_IDS[1]) else REKEY_IDS[0]
        conn = self._connect(timeout=10)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            for table in before:
                step(table)
                schema, _, name = table.rpartition(".")
                cur.execute(f"ALTER TABLE {f'`{schema}`.' if schema else ''}`{name}` ENCRYPTION_KEY_ID={target}")
        finally:
            conn.close()
        after = self._table_keys()
        wrong = sorted(t for t, k in after.items() if k != target)
        if wrong:
            raise RunFailed(f"after ALTER TABLE ... ENCRYPTION_KEY_ID={target} the server reports other keys for "
                            f"{', '.join(wrong[:5])}", "look at the server log")
        return {"statement": f"ALTER TABLE ... ENCRYPTION_KEY_ID={target}", "key_id": target,
                "tables_count": len(after), "tables_on_new_key_count": len(after) - len(wrong)}

    def _table_keys(self) -> dict[str, int | None]:
        conn = self._connect(timeout=10)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            cur.execute(_TABLE_KEYS_SQL)
            return {(str(t) if own else f"{schema}.{t}"): (int(k) if k is not None else None)
                    for schema, own, t, k in cur.fetchall()}
        finally:
            conn.close()

    def connect_to(self, database: str) -> Any:
        """An autocommit connection to ``database`` of this server, created if missing (data the ``encrypt``
        workload loads beside its own, switched with it: :attr:`Engine.switch_whole_server`)."""
        if not database.isidentifier():
            raise RunFailed(f"bad database name {database!r}", "use letters, digits and _ only")
        conn = self._connect(timeout=10, use_database=False)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            cur.execute(f"USE `{database}`")
            conn.autocommit(True)
        except Exception:
            conn.close()
            raise
        return conn
