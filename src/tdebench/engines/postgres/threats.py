"""PostgreSQL's answers to the threat-model probes (:class:`tdebench.api.threat_probes.ThreatProbes`,
docs/security.md): what :meth:`tdebench.engines.postgres.instance.PostgresInstance.threats` returns (and so the
pgcrypto column instance's). They use the instance's cluster (``pgcluster``: paths, superuser connections without
the column key), its gocryptfs mount (``fs``) and, for ``column:*``, its key (``_key``).

* Instance layout: ``home/pgdata`` (or ``home/fs/cipher`` on disk with the mount at ``home/fs/plain``),
  ``home/postgres.log`` (the server's stderr, outside the data directory), ``home/run`` (socket).
* Spill probe: ``work_mem = 64kB`` and a cursor over the canary rows × 20,000 (``generate_series``) ordered by
  the marker, read through the canary relation the workload's way (the decrypting view under ``column:*``);
  after ``FETCH 1`` the external sort's files stay in ``base/pgsql_tmp`` until the cursor closes.
* SELECT user: a NOLOGIN role with SELECT on every table and view of schema ``public``, used through ``SET
  ROLE`` from a superuser session that has no column key (the key is a per-session setting tdebench's own
  sessions send; it is stored nowhere in the database).
"""

from __future__ import annotations

import contextlib
import pwd
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.encryption import redact
from tdebench.api.canary import CANARY_TABLE
from tdebench.api.threat_probes import ThreatProbes
from tdebench.engines.toolkit.exposure import files_holding, key_forms
from tdebench.engines.toolkit.fscrypt import fscrypt_key_row
from tdebench.engines.toolkit.keyrows import server_key_row, unattended

READER = "tdebench_reader"
SPILL_COPIES = 20_000
SPILL_WORK_MEM = "64kB"
_LOG_SETTINGS = ("log_statement", "log_min_duration_statement", "log_min_duration_sample",
                 "log_statement_sample_rate", "log_parameter_max_length", "logging_collector", "log_destination")


class PostgresThreats(ThreatProbes[Any]):
    """Threat-model probes for one private cluster, a PostgresInstance (see the module docstring)."""

    # files ---------------------------------------------------------------------------------------
    def disk_paths(self) -> list[Path]:
        """The instance directory (data or cipher directory, server log, socket) and an outside socket dir."""
        cluster = self.instance.pgcluster
        return [self.instance.home] + ([cluster.socket_dir] if cluster.private_socket_dir else [])

    def live_paths(self) -> list[Path]:
        """The data directory as the server reads it (for fs:fscrypt: inside the unlocked mount; for gocryptfs: the
        mount, read as the server's user, the only one it admits)."""
        return [self.instance.fs.plain_dir] if self.instance.fs is not None else [self.instance.pgcluster.pgdata]

    def live_reader(self) -> pwd.struct_passwd | None:
        return self.instance.fs.owner if self.instance.fs is not None else None

    def data_dir_parts(self) -> dict[str, list[str]] | None:
        if self.instance.image is not None:
            return None  # one image file: WAL and temporary files are blocks of it
        if self.instance.fs is not None:
            return None  # gocryptfs encrypts file names: the parts cannot be told apart on disk
        return {"redo": ["pg_wal/*"], "temp": ["base/pgsql_tmp/*", "pg_tblspc/*"]}

    def temp_locations(self) -> list[Path]:
        db = self.instance
        if db.image is not None:
            return [db.image.image_dir]
        if db.fs is not None:
            return [db.fs.cipher_dir]
        return [db.pgcluster.pgdata / "base" / "pgsql_tmp", db.pgcluster.pgdata / "pg_tblspc"]

    def key_storage(self) -> list[dict[str, Any]]:
        """Column key: memory only. gocryptfs: master key wrapped in gocryptfs.conf, password in memory only."""
        db = self.instance
        roots = self.disk_paths()
        key = getattr(db, "_key", None)
        running = "every session's memory (the setting tdebench.key) and the client's"
        if key is not None and db.key_access is not None:
            key = db.key_access.fetch(1)
            return [server_key_row(db.key_access, f"column key ({key.bits} bits)", "fetched as every session "
                                   "opens, sent as the setting tdebench.key in a bound parameter", running
                                   + ", with the token in the client's", self._relative(files_holding(
                                       roots, key_forms(key.hex()))))]
        if key is not None:
            return [{"key": f"column key ({key.bits} bits)", "source": "file", "where": "memory of the tdebench "
                     "client only; sent to each session as the setting tdebench.key in a bound parameter",
                     "on_disk": False, "beside_data": False, "mode": None, "protected_by": "not stored",
                     "found_in_clear": self._relative(files_holding(roots, key_forms(key.hex()))),
                     "unattended": unattended("the key (in the application's configuration or a file it reads)",
                                              "tdebench keeps it in its memory only"),
                     "running": {"where": running}}]
        if db.image is not None and db.image.encrypted:
            return [fscrypt_key_row(db.key_access)]
        if db.fs is None:
            return []
        return db.fs.key_rows(roots, db.home)

    def _relative(self, paths: list[str]) -> list[str]:
        root = str(self.instance.home)
        return [p[len(root) + 1:] if p.startswith(root + "/") else p for p in paths]

    # server settings ----------------------------------------------------------------------------------
    def _settings(self, names: tuple[str, ...]) -> dict[str, str]:
        with self.instance.pgcluster.connect("postgres", autocommit=True) as conn:
            rows = conn.execute("SELECT name, setting FROM pg_settings WHERE name = ANY(%s)", [list(names)]).fetchall()
        return {str(k): str(v) for k, v in rows}

    def statement_logs(self) -> dict[str, Any]:
        """Statement logging as configured; the log is the server's stderr file, outside the data directory."""
        s = self._settings(_LOG_SETTINGS)
        every = s.get("log_statement", "none") == "all" or s.get("log_min_duration_statement") == "0"
        threshold = int(s.get("log_min_duration_statement", "-1"))
        enabled = s.get("log_statement", "none") != "none" or threshold >= 0
        return {"enabled": enabled, "settings": s, "files": [self.instance.pgcluster.log_path],
                "server_logs": [self.instance.pgcluster.log_path],
                "min_duration_s": None if every or threshold < 0 else threshold / 1000.0}

    def literal_lookup_sql(self, markers: list[str], seconds: float) -> str:
        literals = ", ".join(f"'{m}'" for m in markers)
        return (f"SELECT count(*) FROM {CANARY_TABLE} CROSS JOIN pg_sleep({seconds:.3f}) "
                f"WHERE marker IN ({literals})")

    def transport_security(self) -> dict[str, Any]:
        s = self._settings(("ssl", "ssl_min_protocol_version", "listen_addresses", "port"))
        with self.instance.pgcluster.connect("postgres", autocommit=True) as conn:
            kinds = [str(r[0]) for r in conn.execute("SELECT type FROM pg_hba_file_rules "
                                                     "WHERE error IS NULL").fetchall()]
        network = [k for k in kinds if k.startswith("host")]
        tls = s.get("ssl", "off") == "on"
        listen = s.get("listen_addresses", "")
        return {"tls": tls, "required": tls and bool(network) and all(k == "hostssl" for k in network),
                "listen": f"{listen}:{s.get('port')} and a Unix socket" if listen else "a Unix socket only",
                "settings": {**s, "pg_hba_network_rules": ", ".join(sorted(set(network))) or "none"}}

    # probes ----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any]]:
        """An external sort of the canary rows × 20,000 held open by a cursor (see the module docstring)."""
        query = (f"SELECT c.marker || '-' || g AS v, repeat('x', 40) AS pad FROM {CANARY_TABLE} c "
                 f"CROSS JOIN generate_series(1, {SPILL_COPIES}) g ORDER BY v DESC")
        conn = self.instance.connect()  # the workload's way: with the column key
        try:
            conn.execute(f"SET work_mem = '{SPILL_WORK_MEM}'")
            conn.execute(f"DECLARE tdebench_spill NO SCROLL CURSOR FOR {query}")
            conn.execute("FETCH 1 FROM tdebench_spill").fetchone()
            files, size = conn.execute("SELECT count(*), coalesce(sum(size), 0) FROM pg_ls_tmpdir()").fetchone()
            yield {"query": query.replace(CANARY_TABLE, "<canary relation>"),
                   "settings": {"work_mem": SPILL_WORK_MEM}, "spill_files": int(files), "spill_bytes": int(size),
                   "held_open": "cursor after FETCH 1"}
        finally:
            with contextlib.suppress(Exception):
                conn.rollback()
            conn.close()

    def read_as_select_user(self) -> dict[str, Any]:
        """A role with SELECT only reads every canary relation from a session without the column key."""
        with self.instance.pgcluster.connect(autocommit=True) as conn:
            conn.execute(f"DROP ROLE IF EXISTS {READER}")
            conn.execute(f"CREATE ROLE {READER} NOLOGIN")
            try:
                conn.execute(f"GRANT USAGE ON SCHEMA public TO {READER}")
                conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {READER}")
                names = [str(r[0]) for r in conn.execute(
                    "SELECT relname FROM pg_class WHERE relname LIKE %s AND relkind IN ('r', 'v') "
                    "AND relnamespace = 'public'::regnamespace ORDER BY relname", [f"{CANARY_TABLE}%"]).fetchall()]
                conn.execute(f"SET ROLE {READER}")
                relations = {name: _read(conn, name) for name in names}
                conn.execute("RESET ROLE")
            finally:
                with contextlib.suppress(Exception):
                    conn.execute("RESET ROLE")
                    conn.execute(f"DROP OWNED BY {READER}")
                    conn.execute(f"DROP ROLE {READER}")
        return {"user": READER, "grants": "SELECT on every table and view of schema public, used through SET ROLE "
                                          "from a session without the column key", "relations": relations}


def _read(conn: Any, relation: str) -> dict[str, Any]:
    try:
        rows = conn.execute(f"SELECT * FROM {relation}").fetchall()
    except Exception as exc:  # noqa: BLE001 - e.g. the view cannot decrypt without the key: that is the answer
        return {"error": redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}
    return {"rows": [[bytes(v) if isinstance(v, memoryview) else v for v in r] for r in rows]}
