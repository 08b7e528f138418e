"""MariaDB's own counters (``SHOW GLOBAL STATUS``) in the vocabulary of :mod:`tdebench.api.counters`.

What is counted (docs/engines/mariadb.md):

* ``cache_requests`` / ``cache_misses``: ``Innodb_buffer_pool_read_requests`` / ``Innodb_buffer_pool_reads``
  (logical page reads, and pages read from a data file). MariaDB 10.11 counts every page it reads in
  ``Innodb_buffer_pool_reads``, read-ahead included (it equals ``Innodb_pages_read``; measured: a full scan of a
  table ten times the buffer pool made 2,988 requests, 3,005 reads of which 2,975 were read ahead), so a pure scan
  that does not fit shows a hit ratio near 0%: every page it touched came from storage (and was decrypted under
  TDE), which is the regime the ratio states;
* ``pages_read_ahead``: ``Innodb_buffer_pool_read_ahead`` + ``_read_ahead_rnd``, the part of ``cache_misses``
  read ahead of a request;
* ``pages_read`` / ``pages_written`` / ``pages_created``: ``Innodb_pages_read`` / ``_written`` / ``_created``;
* ``bytes_read`` / ``bytes_written``: ``Innodb_data_read`` / ``Innodb_data_written`` (data files, doublewrite);
* ``log_bytes``: ``Innodb_os_log_written`` (redo log);
* ``bytes_decrypted`` / ``bytes_encrypted``: InnoDB's own encryption counters times the page size:
  ``Innodb_num_pages_decrypted`` / ``_encrypted`` (tablespace pages on their way from / to a file) plus
  ``Innodb_encryption_n_temp_blocks_*`` (temporary tablespace pages), plus ``Innodb_encryption_n_merge_blocks_*``
  and ``_rowlog_blocks_*`` (index builds, online ALTER) times ``innodb_sort_buffer_size``; ``bytes_encrypted``
  adds the redo log bytes when the server encrypts its redo log (``innodb_encrypt_log``: the specs of scope all
  or innodb, once the key plugin is loaded);
* ``page_size``: ``innodb_page_size``.

Status counters are server-wide (every schema) and cumulative since start-up; after a restart they start again
from 0 (the per-step recording sees the drop and must not subtract across it: restarts happen only between
trials).
"""

from __future__ import annotations

from typing import Any

from tdebench.engines.toolkit import fscrypt

STATUS = ("Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_ahead",
          "Innodb_buffer_pool_read_ahead_rnd", "Innodb_pages_read",
          "Innodb_pages_written", "Innodb_pages_created", "Innodb_data_read", "Innodb_data_written",
          "Innodb_os_log_written", "Innodb_num_pages_decrypted", "Innodb_num_pages_encrypted",
          "Innodb_encryption_n_temp_blocks_decrypted", "Innodb_encryption_n_temp_blocks_encrypted",
          "Innodb_encryption_n_merge_blocks_decrypted", "Innodb_encryption_n_merge_blocks_encrypted",
          "Innodb_encryption_n_rowlog_blocks_decrypted", "Innodb_encryption_n_rowlog_blocks_encrypted")
_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(f"'{name}'" for name in STATUS) + ")")


def read_status(cur: Any) -> tuple[dict[str, int], int, int]:
    """(status counters with ``innodb_encrypt_log`` among them, innodb_page_size, innodb_sort_buffer_size) through
    an open cursor."""
    cur.execute(_SQL)
    values = {str(name): int(value) for name, value in cur.fetchall()}
    cur.execute("SELECT @@GLOBAL.innodb_page_size, @@GLOBAL.innodb_sort_buffer_size, @@GLOBAL.innodb_encrypt_log")
    page, sort_buffer, redo_encrypted = cur.fetchone()
    values["innodb_encrypt_log"] = int(redo_encrypted)
    return values, int(page), int(sort_buffer)


def to_counters(values: dict[str, int], page: int, sort_buffer: int, redo_encrypted: bool) -> dict[str, float]:
    """The counter vocabulary from the status values (names missing on this version are left out)."""
    def get(name: str) -> int:
        return values.get(name, 0)

    out: dict[str, float] = {"page_size": page}
    plain = {"cache_requests": "Innodb_buffer_pool_read_requests", "cache_misses": "Innodb_buffer_pool_reads",
             "pages_read": "Innodb_pages_read", "pages_written": "Innodb_pages_written",
             "pages_created": "Innodb_pages_created", "bytes_read": "Innodb_data_read",
             "bytes_written": "Innodb_data_written", "log_bytes": "Innodb_os_log_written"}
    out.update({ours: get(theirs) for ours, theirs in plain.items() if theirs in values})
    if "Innodb_buffer_pool_read_ahead" in values:  # already inside cache_misses (MariaDB counts them as reads)
        out["pages_read_ahead"] = get("Innodb_buffer_pool_read_ahead") + get("Innodb_buffer_pool_read_ahead_rnd")
    if "Innodb_num_pages_decrypted" in values:
        out["bytes_decrypted"] = (page * (get("Innodb_num_pages_decrypted")
                                          + get("Innodb_encryption_n_temp_blocks_decrypted"))
                                  + sort_buffer * (get("Innodb_encryption_n_merge_blocks_decrypted")
                                                   + get("Innodb_encryption_n_rowlog_blocks_decrypted")))
        out["bytes_encrypted"] = (page * (get("Innodb_num_pages_encrypted")
                                          + get("Innodb_encryption_n_temp_blocks_encrypted"))
                                  + sort_buffer * (get("Innodb_encryption_n_merge_blocks_encrypted")
                                                   + get("Innodb_encryption_n_rowlog_blocks_encrypted"))
                                  + (get("Innodb_os_log_written") if redo_encrypted else 0))
    return out


def buffer_pool_bytes(cache_bytes: int) -> int:
    """The ``innodb_buffer_pool_size`` for a cache of ``cache_bytes``: whole MiB, at least 8 MiB (MariaDB's
    smallest useful pool; it adjusts the size to its chunk size itself and reports the result)."""
    mib = 1024 * 1024
    return max(8 * mib, (cache_bytes + mib - 1) // mib * mib)


class MariadbCounters:
    """The counters and cache-size hooks of :class:`tdebench.engines.mariadb.engine.MariadbInstance` (a mixin: it uses
    the instance's ``_connect``, ``options``, ``config``, ``_render_cnf``, ``_path``, ``root`` and ``restart``)."""

    _counter_conn: Any = None

    def counters(self) -> dict[str, float]:
        """Server-wide InnoDB counters (module docstring), read through a connection of their own."""
        for attempt in (1, 2):
            conn = self._counter_conn
            try:
                if conn is None:
                    connect = self._connect  # type: ignore[attr-defined]
                    conn = self._counter_conn = connect(timeout=5, use_database=False)
                values, page, sort_buffer = read_status(conn.cursor())
                break
            except Exception:  # noqa: BLE001 - a restart closed it: reconnect once
                self.close_counters()
                if attempt == 2:
                    raise
        # the server's own word: a server started plaintext to be switched later writes its redo log in the clear
        out = to_counters(values, page, sort_buffer, bool(values.get("innodb_encrypt_log")))
        # out of the layer (an fs: spec's plaintext start) the image holds nothing of the server's: no estimates
        return fscrypt.image_counters(getattr(self, "image", None) if getattr(self, "in_layer", True) else None, out)

    def close_counters(self) -> None:
        conn, self._counter_conn = self._counter_conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - the server may be gone
                pass
