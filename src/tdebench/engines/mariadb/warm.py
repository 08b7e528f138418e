"""Restart a MariaDB server with the same pages in its buffer pool.

* InnoDB's buffer pool dump (``ib_buffer_pool`` in the data directory: page numbers only, never contents) and load
  give back the pages of unencrypted tablespaces (the system tablespace, the mysql schema; in a plain twin most of
  the tables too, but not all: a warm TPC-H query still missed some of its pages after the load).
* The load skips encrypted tablespaces (it reads pages in the background, where it cannot decrypt them; MariaDB
  10.11 ``buf_load``). So in every twin alike, every index of the user's tables that had pages cached is then read
  in full (``SELECT COUNT(*) ... FORCE INDEX``), which caches all its leaf pages and the inner pages on the way
  down. Every such index must have been cached (almost) whole: a cache holding part of one cannot be given back
  as it was, and :class:`~tdebench.api.cache.CacheNotRestorable` says so before anything is stopped.

Twins keep ``innodb_buffer_pool_dump_at_shutdown`` and ``..._load_at_startup`` OFF, so a plain restart (cold-cache
trials) still starts cold: this module dumps and loads explicitly.
"""

from __future__ import annotations

import time
from typing import Any

from tdebench.api.cache import CacheNotRestorable
from tdebench.errors import RunFailed

TIMEOUT = 300.0
POLL = 0.05
WHOLE = 0.95  # share of an index's leaf pages that must be cached for a full read to give the cache back

_CACHED_INDEXES = """
SELECT b.table_name, b.index_name, COUNT(*), MAX(s.stat_value)
FROM information_schema.innodb_buffer_page b
LEFT JOIN mysql.innodb_index_stats s
  ON CONCAT('`', s.database_name, '`.`', s.table_name, '`') = b.table_name AND s.index_name = b.index_name
 AND s.stat_name = 'n_leaf_pages'
WHERE b.page_type = 'INDEX' AND b.table_name LIKE '`%`.`%`' AND b.table_name NOT LIKE '`mysql`.%'
GROUP BY b.table_name, b.index_name
"""


def _status(cur: Any, name: str) -> str:
    cur.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
    row = cur.fetchone()
    return str(row[1]) if row else ""


def _wait(cur: Any, name: str, done: str, before: str, what: str) -> float:
    """Poll ``name`` until it says ``done`` (and is not the ``before`` text); the seconds it took."""
    started = time.monotonic()
    while True:
        text = _status(cur, name)
        if done in text and text != before:
            return time.monotonic() - started
        if "abort" in text.lower() or "error" in text.lower():
            raise RunFailed(f"the buffer pool {what} failed: {text}", "look at the server's error log")
        if time.monotonic() - started > TIMEOUT:
            raise RunFailed(f"the buffer pool {what} did not finish in {TIMEOUT:.0f} s ({text!r})",
                            "run with --no-restart-twins")
        time.sleep(POLL)


def cached_indexes(cur: Any) -> list[tuple[str, str]]:
    """(table, index) of every index of the user's tables with cached pages; CacheNotRestorable if one is cached
    in part."""
    cur.execute(_CACHED_INDEXES)
    out = []
    for table, index, cached, leaves in cur.fetchall():
        if leaves is not None and int(cached) < WHOLE * int(leaves):
            raise CacheNotRestorable(f"the buffer pool holds {int(cached)} of the {int(leaves)} leaf pages of "
                                     f"index {index} of {table}; reading it whole would not give the cache back "
                                     "as it was")
        out.append((str(table), str(index)))
    return out


def _index_hint(index: str) -> str:
    """The hint that makes ``COUNT(*)`` read ``index`` whole. A table without a primary key is clustered on
    InnoDB's hidden ``GEN_CLUST_INDEX``, which no hint can name: ``USE INDEX ()`` (no index) scans the table, which
    in InnoDB is a read of the clustered index."""
    if index == "GEN_CLUST_INDEX":
        return "USE INDEX ()"
    return f"FORCE INDEX (`{index.replace('`', '``')}`)"


def dump_buffer_pool(cur: Any) -> dict[str, Any]:
    """Note the indexes to read back, write the list of every cached page and wait until it is written."""
    scans = cached_indexes(cur)
    before = _status(cur, "Innodb_buffer_pool_dump_status")
    if "completed" in before:  # the status has a one-second timestamp: a new dump must read differently
        time.sleep(1.05)
    cur.execute("SET GLOBAL innodb_buffer_pool_dump_pct = 100")
    cur.execute("SET GLOBAL innodb_buffer_pool_dump_now = ON")
    seconds = _wait(cur, "Innodb_buffer_pool_dump_status", "dump completed", before, "dump")
    return {"pages_cached": int(_status(cur, "Innodb_buffer_pool_pages_data") or 0), "dump_s": round(seconds, 3),
            "_scans": scans}


def load_buffer_pool(cur: Any, saved: dict[str, Any]) -> dict[str, Any]:
    """Load the dumped pages back, then read the noted indexes whole."""
    before = _status(cur, "Innodb_buffer_pool_load_status")
    cur.execute("SET GLOBAL innodb_buffer_pool_load_now = ON")
    seconds = _wait(cur, "Innodb_buffer_pool_load_status", "load completed", before, "load")
    started = time.monotonic()
    for table, index in saved.get("_scans", []):
        cur.execute(f"SELECT COUNT(*) FROM {table} {_index_hint(index)}")
        cur.fetchall()
    return {"pages_loaded": int(_status(cur, "Innodb_buffer_pool_pages_data") or 0), "load_s": round(seconds, 3),
            "indexes_read": len(saved.get("_scans", [])), "read_s": round(time.monotonic() - started, 3)}
