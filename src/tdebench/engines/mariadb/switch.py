"""MariaDB's online switch: existing InnoDB tablespaces encrypted (or decrypted) in place by the encryption threads.

A DBA turns encryption on in a running MariaDB whose key plugin is loaded with ``SET GLOBAL innodb_encrypt_tables``;
``innodb_encryption_threads`` background threads then rewrite every page of every tablespace, at most
``innodb_encryption_rotation_iops`` page operations a second, while the server serves. Progress is the server's own:
``information_schema.INNODB_TABLESPACES_ENCRYPTION`` (``ENCRYPTION_SCHEME`` 1 and ``MIN_KEY_VERSION`` >= 1 once a
tablespace is encrypted, ``KEY_ROTATION_PAGE_NUMBER`` / ``ROTATING_OR_FLUSHING`` while the threads work on it) and
the ``Innodb_encryption_rotation_*`` status counters.

A DBA starts from a plaintext server: no key plugin, a plaintext redo log. :meth:`MariadbTdeSwitcher.start_plain`
therefore re-creates the (empty) instance without the encryption options, and :meth:`MariadbTdeSwitcher.restart` is
the restart the switch needs: it loads ``file_key_management`` and the options only a restart can change (the redo
log's encryption, temporary files and tables, Aria: per the spec's scope) with ``innodb_encrypt_tables`` still off;
after the way back it restarts without them. MariaDB 10.11 rebuilds the redo log with the new setting on such a
start after a clean shutdown; it cannot open an encrypted redo log without the plugin, so the way back restarts
twice: once with the plugin and a plaintext redo log, once without the plugin. A Galera cluster
(:class:`GaleraSwitcher`) keeps the old way: its nodes start with the plugin loaded, and its ``start_plain`` turns
``innodb_encrypt_tables`` off and waits until the threads have decrypted what ``mariadb-install-db`` wrote.

The switchers are what :meth:`MariadbInstance.switcher` returns for a ``tde:`` spec
(:attr:`MariadbEngine.switcher_types`); the instance keeps the switch's state that its own files show
(:class:`MariadbSwitch`: ``tde_loaded``, the settings persisted in my.cnf).
"""

from __future__ import annotations

import time
from typing import Any

from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import OnlineSwitcher, Rekeying, Restarting, Step
from tdebench.encryption import EncryptionSpec
from tdebench.errors import EnvironmentProblem, RunFailed

PLAIN_WAIT = 300.0
SWITCH_RESTART = ("a restart with file_key_management loaded and the options only a restart sets (innodb_encrypt_log, "
                  "temporary files and tables, Aria; per the spec's scope), innodb_encrypt_tables still OFF; after the "
                  "way back a restart without them")
#: my.cnf's switch settings right after the restart that loads the plugin: nothing encrypted yet, no thread busy
_LOADED_IDLE = {"innodb_encrypt_tables": "OFF", "innodb_encryption_threads": "0"}
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
    """Mixin of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`: the switch's state its own files keep (the
    key plugin loaded or not, the switch's settings in my.cnf). The server's other databases a switch covers
    (:attr:`~tdebench.api.switcher.Switcher.whole_server`) are reached through its
    :class:`~tdebench.engines.mariadb.tools.MariadbServerAccess`."""

    tde_loaded: bool
    _persisted: dict[str, str]

    def _persist(self, values: dict[str, str]) -> None:
        """Write the switch's settings into my.cnf too, so that a restart (crash recovery, ``--restart-twins``)
        keeps the state the switch reached, as a DBA would."""
        self._persisted.update(values)
        self._path("my.cnf").write_text(self._render_cnf())  # type: ignore[attr-defined]


class MariadbSwitcher(OnlineSwitcher[Any]):
    """The online switch of a :class:`~tdebench.engines.mariadb.engine.MariadbInstance` of a ``tde:`` spec: InnoDB's
    encryption threads, set by ``SET GLOBAL``, followed in ``INNODB_TABLESPACES_ENCRYPTION``."""

    method = ("SET GLOBAL innodb_encrypt_tables = ON/OFF: innodb_encryption_threads re-write every tablespace in "
              "place while the server serves (progress: INNODB_TABLESPACES_ENCRYPTION)")

    @classmethod
    def switches(cls, spec: EncryptionSpec) -> bool:
        return spec.mechanism == "tde"

    def _run(self, statements: list[str]) -> list[tuple[Any, ...]]:
        """The rows of the last of ``statements``, run in order on one connection (no database selected)."""
        conn = self.instance._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            rows: list[tuple[Any, ...]] = []
            for sql in statements:
                cur.execute(sql)
                rows = list(cur.fetchall())
            return rows
        finally:
            conn.close()

    def switch(self, on: bool, threads: int, iops: int | None = None) -> dict[str, Any]:
        """``innodb_encryption_rotation_iops``, ``innodb_encrypt_tables`` ON/OFF, then ``innodb_encryption_threads``
        (which starts the work)."""
        statements = [f"SET GLOBAL innodb_encryption_rotation_iops = {int(iops)}"] if iops else []
        statements += [f"SET GLOBAL innodb_encrypt_tables = {'ON' if on else 'OFF'}",
                       f"SET GLOBAL innodb_encryption_threads = {int(threads)}",
                       "SELECT @@innodb_encrypt_tables, @@innodb_encryption_threads, @@innodb_encryption_rotation_iops"]
        row = self._run(statements)[0]
        self.instance._persist({"innodb_encrypt_tables": str(row[0]), "innodb_encryption_threads": str(int(row[1])),
                                "innodb_encryption_rotation_iops": str(int(row[2]))})
        return {"innodb_encrypt_tables": str(row[0]), "innodb_encryption_threads": int(row[1]),
                "innodb_encryption_rotation_iops": int(row[2])}

    def progress(self, on: bool = True) -> SwitchProgress:
        """Tablespaces in the target state (:func:`classify`) and the rotation counters."""
        conn = self.instance._connect(timeout=10, use_database=False)
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


class MariadbTdeSwitcher(Rekeying, Restarting[Any], MariadbSwitcher):
    """A single server's switch: from a server without the key plugin, loaded by a restart; re-keyed online."""

    restart_reason = SWITCH_RESTART
    rekey_method = ("ALTER TABLE ... ENCRYPTION_KEY_ID=k for every table (a rebuild under another key of the key "
                    "file, online DDL); file_key_management has no key versions, so no rotation by key age")
    whole_server = True  # innodb_encrypt_tables covers every tablespace; ServerAccess.connect_to creates a database

    def start_plain(self) -> dict[str, Any]:
        """A plaintext server to switch from: re-created without the encryption options (it is still empty)."""
        inst = self.instance
        inst._teardown(True)
        inst.tde_loaded, inst._persisted = False, {}
        inst.start()
        return {"start": "re-created without the key plugin: every file plaintext, the redo log too (the switch "
                         "restarts the server to load the plugin)", "tablespaces": self.progress(False).total}

    def restart(self, on: bool, step: Step) -> dict[str, Any] | None:
        """The restart that loads the key plugin and the restart-only options (``on``), or unloads them after the
        way back; None when the server is in that state already."""
        inst = self.instance
        if inst.tde_loaded == on:
            return None
        if not on and not (progress := self.progress(on=False)).done:
            raise RunFailed(f"{inst.config.label}: cannot unload the key plugin while tablespaces are encrypted "
                            f"({', '.join(progress.pending)})", "switch encryption off first")
        redo = inst.config.spec.scope in ("", "innodb")  # the spec encrypts the redo log
        if not on and redo:
            # MariaDB cannot open an encrypted redo log without the plugin: rebuilt plaintext first, plugin loaded
            self._restart_with(True, {**_LOADED_IDLE, "innodb_encrypt_log": "OFF"}, step, "_for_plain_redo")
        self._restart_with(on, dict(_LOADED_IDLE) if on else {}, step)
        rows = self._run(["SELECT @@innodb_encrypt_log, (SELECT COUNT(*) FROM information_schema.plugins "
                          f"WHERE plugin_name = '{inst.key_plugin}' AND plugin_status = 'ACTIVE')"])
        log, plugin = (int(v) for v in rows[0])
        if (log if redo else 0) != int(on) or plugin != int(on):
            raise RunFailed(f"{inst.config.label}: after the restart the server reports the key plugin "
                            f"{'active' if plugin else 'not loaded'} and innodb_encrypt_log={log}",
                            "look at the server log")
        return {"key_plugin": "loaded" if on else "unloaded", "innodb_encrypt_log": "ON" if log else "OFF",
                "restarts_count": 2 if not on and redo else 1}

    def _restart_with(self, loaded: bool, persisted: dict[str, str], step: Step, why: str = "") -> None:
        """Stop, my.cnf with (``loaded``) or without the encryption options, start; ``step`` told of each."""
        inst = self.instance
        step("stop" + why)
        inst._stop(False)
        inst.tde_loaded, inst._persisted = loaded, persisted
        inst._path("my.cnf").write_text(inst._render_cnf())
        step("start" + why)
        inst.start()

    def rekey(self, step: Step) -> dict[str, Any]:
        """``ALTER TABLE ... ENCRYPTION_KEY_ID=k`` for every InnoDB table of the server's user databases (the
        workload's own first, named bare; the others as ``<database>.<table>``), one after the other,
        while the server serves: each is rebuilt (online DDL) with its pages encrypted under key ``k``, the other
        of :data:`REKEY_IDS` than most tables use now. The key id per tablespace afterwards is the server's own
        (``INNODB_TABLESPACES_ENCRYPTION.CURRENT_KEY_ID``)."""
        before = self._table_keys()
        current = [k for k in before.values() if k is not None]
        target = REKEY_IDS[1] if current.count(REKEY_IDS[0]) >= current.count(REKEY_IDS[1]) else REKEY_IDS[0]
        conn = self.instance._connect(timeout=10)
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
        conn = self.instance._connect(timeout=10)
        try:
            cur = conn.cursor()
            cur.execute(_TABLE_KEYS_SQL)
            return {(str(t) if own else f"{schema}.{t}"): (int(k) if k is not None else None)
                    for schema, own, t, k in cur.fetchall()}
        finally:
            conn.close()


class GaleraSwitcher(MariadbSwitcher):
    """A Galera cluster's switch: its nodes start with the key plugin loaded (a rolling restart is not measured), so
    the plaintext start is every tablespace decrypted in place; no re-keying (``ALTER TABLE ... ENCRYPTION_KEY_ID``
    under total-order isolation is not tried on a cluster yet), no second database."""

    def start_plain(self) -> dict[str, Any]:
        """``innodb_encrypt_tables`` off, and wait until the threads decrypted the system tables; the threads are
        then stopped (0) so that the baseline runs without them."""
        self._run(["SET GLOBAL innodb_encryption_threads = 4", "SET GLOBAL innodb_encrypt_tables = OFF"])
        deadline = time.monotonic() + PLAIN_WAIT
        while not (progress := self.progress(on=False)).done:
            if time.monotonic() > deadline:
                raise EnvironmentProblem(f"{self.instance.config.label}: the encryption threads did not decrypt the "
                                         f"system tablespaces within {PLAIN_WAIT:.0f} s "
                                         f"({', '.join(progress.pending)})", "look at the server log")
            time.sleep(0.2)
        self._run(["SET GLOBAL innodb_encryption_threads = 0"])
        self.instance._persist({"innodb_encrypt_tables": "OFF", "innodb_encryption_threads": "0"})
        return {"start": "key plugin loaded, innodb_encrypt_tables=OFF, every tablespace plaintext",
                "tablespaces": progress.total}
