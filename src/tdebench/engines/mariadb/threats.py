"""MariaDB's answers to the threat-model probes (:class:`tdebench.api.threat_probes.ThreatProbes`, docs/security.md):
what :meth:`tdebench.engines.mariadb.engine.MariadbInstance.threats` returns. They use the instance's paths
(``_path``), its connections (``_connect``), its key material (``_keys``) and its listen settings (``_port``,
``socket``).

* Instance layout: ``data/`` (datadir: tablespaces, redo log ``ib_logfile*``, InnoDB temporary tablespace
  ``ibtmp1``, statement logs by default), ``tmp/`` (tmpdir: filesort files, on-disk temporary tables),
  ``keys/keys.enc``, ``my.cnf``, ``server.log``. Under gocryptfs ``data/`` and ``tmp/`` are in the mount
  (``gocryptfs/plain``), ``gocryptfs/cipher`` is what is on disk.
* Spill probe: the canary rows × 20,000 (``seq_1_to_20000``, the Sequence engine) sorted with the smallest
  ``sort_buffer_size``, read through an unbuffered cursor that stops after one row: the server, blocked on
  sending the rest, keeps its filesort file open in ``tmp/`` (already unlinked: it is read through
  ``/proc/<pid>/fd``).
* SELECT user: created with a password hash (``IDENTIFIED BY PASSWORD``), since the general log records a
  ``CREATE USER ... IDENTIFIED BY '<password>'`` statement in clear; dropped afterwards.
"""

from __future__ import annotations

import contextlib
import pwd
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors

from tdebench.encryption import generate_password, redact
from tdebench.api.canary import CANARY_TABLE
from tdebench.api.threat_probes import ThreatProbes
from tdebench.engines.toolkit.exposure import key_forms, mode_text, same_disk, search_files
from tdebench.engines.toolkit.fscrypt import fscrypt_key_row
from tdebench.engines.toolkit.keyrows import server_key_row, unattended
from tdebench.engines.mariadb.support import close_quietly, native_password_hash
from tdebench.errors import EnvironmentProblem

READER = "tdebench_reader"
SPILL_COPIES = 20_000
_LOG_VARIABLES = ("general_log", "general_log_file", "slow_query_log", "slow_query_log_file", "long_query_time",
                  "log_output", "log_slow_rate_limit", "log_slow_min_examined_row_limit", "log_slow_verbosity")


class MariadbThreats(ThreatProbes[Any]):
    """Threat-model probes for one private mariadbd, a MariadbInstance (see the module docstring)."""

    # files ---------------------------------------------------------------------------------------
    def disk_paths(self) -> list[Path]:
        """The instance directory (data, tmp, keys, logs, my.cnf) and a socket directory kept elsewhere; on an
        ext4 image, its home (the image; the mounted view is not on disk)."""
        db = self.instance
        top = db.home if db.image is not None and db.home is not None else db._path()
        return [top] + ([db._socket_dir] if db._socket_dir is not None else [])

    def live_paths(self) -> list[Path]:
        """The instance directory as the server sees it (for fs:fscrypt: inside the unlocked mount); under gocryptfs
        the mount (datadir and tmpdir in clear)."""
        return [self.instance.fs.plain_dir] if self.instance.fs is not None else [self.instance._path()]

    def live_reader(self) -> pwd.struct_passwd | None:
        """gocryptfs' mount admits only the server's user (not root): it is read as that user."""
        return self.instance.fs.owner if self.instance.fs is not None else None

    def data_dir_parts(self) -> dict[str, list[str]] | None:
        if self.instance.image is not None:
            return None  # one image file: the redo log and temporary files are blocks of it
        if self.instance.fs is not None:
            return None  # gocryptfs encrypts file names: the parts cannot be told apart on disk
        return {"datadir": ["data/*"], "redo": ["data/ib_logfile*"], "temp": ["data/ibtmp1", "tmp/*"]}

    def temp_locations(self) -> list[Path]:
        db = self.instance
        if db.fs is not None:  # on an image too: the cipher directory is what the server's spills become
            return [db.fs.cipher_dir]
        if db.image is not None:
            return [db.image.image_dir]  # spills land in the image's blocks (encrypted under fscrypt)
        return [db.tmpdir, db.datadir / "ibtmp1"]

    def key_storage(self) -> list[dict[str, Any]]:
        """The encrypted key file beside the data, and the file key that exists only during start-up."""
        db = self.instance
        if db.image is not None and db.image.encrypted:
            return [fscrypt_key_row(db.key_access)]
        if db.fs is not None:
            return db.fs.key_rows(self.disk_paths(), db._path())
        if db.key_access is not None and db.encrypted:
            keys = [db.key_access.fetch(1)]
            with contextlib.suppress(EnvironmentProblem):  # key 2 is optional on a user's key server
                keys.append(db.key_access.fetch(2))
            found = search_files(self.disk_paths(), {"data": [f for k in keys for f in key_forms(k.hex())]})
            return [server_key_row(db.key_access, f"data keys 1 and 2 (AES-{keys[0].bits})", "fetched by the "
                                   "server's hashicorp_key_management plugin at start-up and when its cache expires",
                                   "mariadbd's environment (VAULT_TOKEN), and the keys in its memory",
                                   self._relative(found["data"]))]
        if db._keys is None:
            return []
        return self._file_key_rows()

    def _file_key_rows(self) -> list[dict[str, Any]]:
        """The file key management plugin's keys: keys.enc beside the data, its file key on tmpfs at start-up."""
        db = self.instance
        key_file = db._path("keys", "keys.enc")
        data = [f for k in db._keys.keys.values() for f in key_forms(k.hex())]
        found = search_files(self.disk_paths(), {"data": data, "filekey": [db._keys.filekey.encode()]})
        placeholder = db._path("keys", "filekey")
        return [
            {"key": f"data keys 1 and 2 (AES-{db._keys.bits})", "source": "file",
             "where": "keys/keys.enc in the instance directory",
             "on_disk": key_file.is_file(), "beside_data": same_disk(key_file, db._path("data")),
             "mode": mode_text(key_file),
             "protected_by": "AES-256-CBC (OpenSSL 'Salted__' format) under a random file key",
             "named_in": "my.cnf (file_key_management_filename; file_key_management_filekey=FILE:keys/filekey, a "
                         "path that exists only during start-up)",
             "unattended": unattended("the file key (file_key_management_filekey: a file, or its text in my.cnf)",
                                      "tdebench writes it to tmpfs only while the server starts"),
             "running": {"where": "the server's memory (the file key is deleted after start-up here; where the "
                                  "server restarts unattended it is on the host, readable by root and the server's "
                                  "OS user)"},
             "found_in_clear": self._relative(found["data"])},
            {"key": "file key (decrypts keys.enc)", "source": "file", "where": "a 0700 directory on tmpfs (/dev/shm) "
             "during start-up only, linked from keys/filekey and deleted once the server is ready",
             "on_disk": placeholder.is_symlink() or placeholder.exists(), "beside_data": False, "mode": None,
             "protected_by": "not stored", "found_in_clear": self._relative(found["filekey"])},
        ]

    def _relative(self, paths: list[str]) -> list[str]:
        root = str(self.instance._path())
        return [p[len(root) + 1:] if p.startswith(root + "/") else p for p in paths]

    # server variables -------------------------------------------------------------------------------
    def _variables(self, names: tuple[str, ...]) -> dict[str, str]:
        conn = self.instance._connect(timeout=10)
        try:
            cur = conn.cursor()
            cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ", ".join(["%s"] * len(names)) + ")",
                        names)
            return {str(k): str(v) for k, v in cur.fetchall()}
        finally:
            close_quietly(conn)

    def statement_logs(self) -> dict[str, Any]:
        """General and slow-query logs as the server runs them (files relative to the datadir resolved)."""
        v = self._variables(_LOG_VARIABLES)
        general = v.get("general_log", "OFF").upper() in ("ON", "1")
        slow = v.get("slow_query_log", "OFF").upper() in ("ON", "1")
        outputs = {o.strip().upper() for o in v.get("log_output", "FILE").split(",")}
        datadir = self.instance.datadir
        files: list[Path] = []
        if "FILE" in outputs:
            files += [datadir / v[name] for on, name in ((general, "general_log_file"), (slow, "slow_query_log_file"))
                      if on and v.get(name)]
        if "TABLE" in outputs:  # CSV tables in the datadir, never encrypted
            files += [datadir / "mysql" / f"{t}.CSV" for on, t in ((general, "general_log"), (slow, "slow_log")) if on]
        enabled = (general or slow) and "NONE" not in outputs
        return {"enabled": enabled, "settings": {k: v[k] for k in _LOG_VARIABLES if k in v},
                "files": files, "server_logs": [self.instance._path("server.log")],
                "min_duration_s": None if general else float(v.get("long_query_time", "10"))}

    def literal_lookup_sql(self, markers: list[str], seconds: float) -> str:
        literals = ", ".join(f"'{m}'" for m in markers)
        return f"SELECT COUNT(*), SLEEP({seconds:.3f}) FROM {CANARY_TABLE} WHERE marker IN ({literals})"

    def transport_security(self) -> dict[str, Any]:
        v = self._variables(("have_ssl", "require_secure_transport", "tls_version", "skip_networking", "port"))
        port = self.instance._port
        return {"tls": v.get("have_ssl", "").upper() == "YES",
                "required": v.get("require_secure_transport", "OFF").upper() in ("ON", "1"),
                "listen": f"127.0.0.1:{port} and a Unix socket" if port else "a Unix socket only", "settings": v}

    def core_dump_facts(self) -> dict[str, Any]:
        """mariadbd writes a core on a crash only with ``core_file``; ``memlock`` keeps it out of swap."""
        v = self._variables(("core_file", "locked_in_memory"))
        core = v.get("core_file", "OFF").upper() in ("ON", "1")
        locked = v.get("locked_in_memory", "OFF").upper() in ("ON", "1")
        return {"server_dumps_core": core, "applies_to": ["mariadbd", "mysqld"], "memory_locked": locked,
                "settings": v, "note": "without core_file, mariadbd's crash handler prints a stack trace and exits "
                                       "without a core"}

    # probes ----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any]]:
        """A sort of the canary rows × 20,000 through filesort files, held open (see the module docstring)."""
        query = (f"SELECT CONCAT(c.marker, '-', s.seq) AS v, REPEAT('x', 40) AS pad FROM {CANARY_TABLE} c "
                 f"CROSS JOIN seq_1_to_{SPILL_COPIES} s ORDER BY v DESC")
        settings = {"sort_buffer_size": "32768", "tmp_table_size": "16384", "max_heap_table_size": "16384"}
        watcher = self.instance._connect(timeout=10)
        conn = self.instance._connect(timeout=10)
        stream = conn.cursor(pymysql.cursors.SSCursor)
        try:
            before = _tmp_files(watcher)
            stream.execute("SET SESSION " + ", ".join(f"{k} = {v}" for k, v in settings.items()))
            stream.execute(query)
            stream.fetchone()
            yield {"query": query.replace(CANARY_TABLE, "<canary table>"), "settings": settings,
                   "spill_files": _tmp_files(watcher) - before, "held_open": "unbuffered cursor stopped after one row"}
        finally:
            with contextlib.suppress(Exception):
                watcher.cursor().execute(f"KILL CONNECTION {int(conn.thread_id())}")
            close_quietly(watcher)
            result = getattr(stream, "_result", None)
            if result is not None:  # killed: there is no rest of the result to drain
                result.unbuffered_active = False
            with contextlib.suppress(Exception):
                conn._force_close()

    def read_as_select_user(self) -> dict[str, Any]:
        """A user with SELECT on the benchmark schema reads the canary table, then is dropped."""
        database = self.instance.database
        password = generate_password()
        hosts = ["localhost"] + (["127.0.0.1"] if self.instance._port else [])
        admin = self.instance._connect(timeout=10)
        try:
            cur = admin.cursor()
            for host in hosts:
                cur.execute(f"CREATE OR REPLACE USER '{READER}'@'{host}' "
                            f"IDENTIFIED BY PASSWORD '{native_password_hash(password)}'")
                cur.execute(f"GRANT SELECT ON `{database}`.* TO '{READER}'@'{host}'")
            admin.commit()
            relations = {CANARY_TABLE: self._read_as(READER, password, database)}
            return {"user": READER, "grants": f"SELECT on {database}.* (no other privilege)", "relations": relations}
        finally:
            with contextlib.suppress(Exception):
                for host in hosts:
                    admin.cursor().execute(f"DROP USER IF EXISTS '{READER}'@'{host}'")
                admin.commit()
            close_quietly(admin)

    def _read_as(self, user: str, password: str, database: str) -> dict[str, Any]:
        target: dict[str, Any] = ({"host": "127.0.0.1", "port": self.instance._port} if self.instance._port
                                  else {"unix_socket": str(self.instance.socket)})
        try:
            conn = pymysql.connect(user=user, password=password, database=database, connect_timeout=10,
                                   charset="utf8mb4", ssl_disabled=True, **target)  # no TLS on the private server
        except pymysql.err.MySQLError as exc:
            return {"error": redact(str(exc))}
        try:
            cur = conn.cursor()
            cur.execute(f"SELECT * FROM {CANARY_TABLE}")
            return {"rows": [list(r) for r in cur.fetchall()]}
        except pymysql.err.MySQLError as exc:
            return {"error": redact(str(exc))}
        finally:
            close_quietly(conn)


def _tmp_files(conn: Any) -> int:
    cur = conn.cursor()
    cur.execute("SHOW GLOBAL STATUS LIKE 'Created_tmp_files'")
    row = cur.fetchone()
    return int(row[1]) if row else 0
