"""PostgreSQL's own counters in the vocabulary of :mod:`tdebench.api.counters`, and its cache size.

What is counted (docs/engines/postgres.md), read through a connection of their own to the ``postgres`` database:

* ``cache_requests`` / ``cache_misses`` / ``pages_read``: ``shared_blks_hit + shared_blks_read`` /
  ``shared_blks_read`` summed over ``pg_stat_statements`` for the benchmark database. pg_stat_statements adds a
  statement's figures when it ends, so they belong to the step that ran it (``pg_stat_database`` publishes a
  backend's figures up to a second late). It is preloaded in every twin (``shared_preload_libraries``); a miss
  of shared_buffers may still be served by the OS page cache (see :meth:`PostgresCounters.resize_cache`).
* ``pages_written``: ``shared_blks_written`` of the statements plus the checkpointer's and background writer's
  buffers (``pg_stat_bgwriter``, published when they report: late, cluster-wide).
* ``temp_bytes``: ``temp_blks_written`` × block size; ``log_bytes``: WAL inserted (``pg_current_wal_lsn``).
* ``bytes_read`` / ``bytes_written``: read()/write() bytes of the server's processes (/proc/<pid>/io ``rchar`` /
  ``wchar``; reaped children's move to their parent), page cache hits included.
* ``fs:*`` (gocryptfs): ``bytes_encrypted_estimate`` = the server's ``wchar`` (every file it writes but its log is
  on the mount), ``bytes_decrypted_estimate`` = gocryptfs's ``rchar`` minus that (what gocryptfs read besides the
  write requests FUSE handed it: cipher blocks it decrypted).
* ``column:*`` (pgcrypto): ``values_read_encrypted`` = rows fetched from each encrypted base table
  (``seq_tup_read + idx_tup_fetch``, published up to a second late) × its encrypted columns: an upper bound of
  the values decrypted (a query decrypts only the columns it uses). Nothing counts the values exactly without
  timing every pgcrypto call (``track_functions = all``), which would slow the encrypted twin alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tdebench.api.cache import WarmCache
from tdebench.engines.toolkit import fscrypt, memcap, pagecache

PRELOAD = "pg_stat_statements"
MIB = 1024 * 1024
#: private memory a capped server may use beyond shared_buffers besides its sorts and hashes
BASE_HEADROOM = 128 * MIB
_STATEMENTS = """
SELECT coalesce(sum(s.shared_blks_hit), 0)::bigint, coalesce(sum(s.shared_blks_read), 0)::bigint,
       coalesce(sum(s.shared_blks_written), 0)::bigint, coalesce(sum(s.temp_blks_written), 0)::bigint,
       (SELECT buffers_checkpoint + buffers_clean FROM pg_stat_bgwriter)::bigint,
       pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, current_setting('block_size')::int
FROM pg_stat_statements(false) s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = %s"""


def with_preload(gucs: dict[str, str], libdir: Path) -> dict[str, str]:
    """``gucs`` plus ``shared_preload_libraries = pg_stat_statements`` when the module is installed and the user
    set no preload list of their own (then the statement counters are missing, and the report says so)."""
    if "shared_preload_libraries" in gucs or not (libdir / f"{PRELOAD}.so").is_file():
        return gucs
    return {**gucs, "shared_preload_libraries": PRELOAD, "pg_stat_statements.max": "10000",
            "pg_stat_statements.track": "top"}


def tree_io(pids: list[int]) -> tuple[int, int]:
    """(rchar, wchar) summed over ``pids``."""
    total_r = total_w = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/io") as fh:
                fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
        except (OSError, ValueError):
            continue
        total_r += int(fields.get("rchar", 0))
        total_w += int(fields.get("wchar", 0))
    return total_r, total_w


class SharedBuffers(WarmCache):
    """shared_buffers, sized (:meth:`PostgresCounters.resize_cache`) and kept across a restart: the cached blocks
    noted (pg_buffercache) and read back (pg_prewarm) by the instance's ``save_cache`` and ``load_cache``."""

    setting = "shared_buffers"
    setting_unit = 8192  # a bare number of shared_buffers counts blocks
    page_sources = ("disk", "memory")
    headroom = 512 * 1024 * 1024  # the memory cgroup's room beyond the cache (:func:`_headroom`)

    def resize(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        return self.instance.resize_cache(cache_bytes, page_source)

    def save(self) -> dict[str, Any]:
        return self.instance.save_cache()

    def load(self, saved: dict[str, Any]) -> dict[str, Any]:
        return self.instance.load_cache(saved)

    def os_cache_files(self) -> tuple[Path, Path] | None:
        return self.instance.page_cache_dirs()


class PostgresCounters:
    """Counters and cache-size hooks of :class:`tdebench.engines.postgres.engine.PostgresInstance` (a mixin: it uses the
    instance's ``cluster``, ``fs``, ``config`` and ``restart``)."""

    _counter_conn: Any = None
    _table_conn: Any = None
    _cap: memcap.MemoryCap | None = None
    _page_source = ""
    _cache_note = ""

    # counters ------------------------------------------------------------------------------------------------
    def counters(self) -> dict[str, float]:
        """The module docstring's counters; statement counters are left out when pg_stat_statements is not loaded."""
        cluster = self.pgcluster  # type: ignore[attr-defined]
        out: dict[str, float] = {}
        row = self._statement_row()
        if row is not None:
            hit, read, written, temp, background, wal, block = row
            out.update(page_size=block, cache_requests=hit + read, cache_misses=read, pages_read=read,
                       pages_written=written + background, temp_bytes=temp * block, log_bytes=wal)
        server_r, server_w = tree_io(cluster.pids())
        out.update(bytes_read=server_r, bytes_written=server_w)
        layer = getattr(self, "in_layer", True)  # out of its fs: layer (before a switch) nothing is encrypted
        fs = self.fs if layer else None  # type: ignore[attr-defined]
        if fs is not None:
            fuse_r, _ = tree_io(fs.pids())
            out.update(bytes_encrypted_estimate=server_w, bytes_decrypted_estimate=max(0, fuse_r - server_w))
        values = self._values_read_encrypted()
        if values is not None:
            out["values_read_encrypted"] = values
        kills = self._cap.oom_kills() if self._cap is not None else None
        if kills is not None:
            out["oom_kills"] = kills
        if fs is None and layer:  # gocryptfs's own estimates above stand for a gocryptfs twin on an image
            fscrypt.image_counters(getattr(self, "image", None), out)
        return out

    def _statement_row(self) -> tuple[int, ...] | None:
        cluster = self.pgcluster  # type: ignore[attr-defined]
        if cluster.gucs.get("shared_preload_libraries") != PRELOAD:
            return None
        for attempt in (1, 2):
            try:
                if self._counter_conn is None or self._counter_conn.closed:
                    self._counter_conn = cluster.connect("postgres", connect_timeout=5, autocommit=True)
                    self._counter_conn.execute(f"CREATE EXTENSION IF NOT EXISTS {PRELOAD}")
                row = self._counter_conn.execute(_STATEMENTS, [cluster.database]).fetchone()
                return tuple(int(x) for x in row)
            except Exception:  # noqa: BLE001 - a restart closed it: reconnect once
                self.close_counters()
                if attempt == 2:
                    raise
        return None

    def _values_read_encrypted(self) -> int | None:
        """Rows fetched from encrypted base tables × their encrypted columns (column encryption only)."""
        schema = getattr(self, "schema", None)
        if schema is None or not schema.encrypted:
            return None
        columns = {schema.relation(t): len(cols) for t, cols in schema.encrypted.items() if cols}
        if self._table_conn is None or self._table_conn.closed:
            self._table_conn = self.pgcluster.connect(connect_timeout=5, autocommit=True)  # type: ignore[attr-defined]
        rows = self._table_conn.execute(
            "SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables "
            "WHERE relname = ANY(%s)", [list(columns)]).fetchall()
        return sum(int(n) * columns[name] for name, n in rows)

    def close_counters(self) -> None:
        for name in ("_counter_conn", "_table_conn"):
            conn = getattr(self, name)
            setattr(self, name, None)
            if conn is not None:
                try:
                    conn.close()
                except Exception:  # noqa: BLE001 - the server may be gone
                    pass

    # cache size ------------------------------------------------------------------------------------------------
    def resize_cache(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        """``shared_buffers`` = ``cache_bytes``, then a restart (shared_buffers start empty). From memory: the
        data files are read into the OS page cache after the restart. From the disk: the OS page cache is
        bounded by putting the server's processes in a memory cgroup limited to shared_buffers + a headroom for
        its private memory (``memory_headroom``, default :func:`_headroom`): what the cgroup's processes read in
        is charged to it and reclaimed first, so a page shared_buffers misses comes from the disk or from the
        little cache the headroom leaves. The data files' pages cached before (by the load, charged to no
        cgroup of the server) are dropped while the server is stopped. Without a usable cgroup (not root, no
        controller) the OS cache is not bounded, and the result says so."""
        cluster = self.pgcluster  # type: ignore[attr-defined]
        image = getattr(self, "image", None)
        kib = max(2048, cache_bytes // 1024)
        cluster.gucs["shared_buffers"] = f"{kib}kB"
        cluster.write_conf()
        self._page_source = page_source
        if page_source == "memory":
            self.restart()  # type: ignore[attr-defined]
            data = self.data_dir  # type: ignore[attr-defined]
            cached = pagecache.refill(data, data)["page_cache_refilled_bytes"]
            return {"shared_buffers": f"{kib}kB", "cache_bytes": kib * 1024,
                    "os_page_cache": f"holds the data: {cached // MIB} MiB of data files read into it after the "
                                     "restart", **({"loop_direct_io": image.direct_io} if image is not None else {})}
        if image is not None:  # misses must reach the disk, not the host's cache of the image file
            image.use_direct_io()
        headroom = _headroom(self.config.settings, cluster.gucs)  # type: ignore[attr-defined]
        reason = memcap.unavailable()
        if not reason:
            if self._cap is None:
                self._cap = memcap.MemoryCap(self.config.label)  # type: ignore[attr-defined]
            self._cap.set_limit(kib * 1024 + headroom)
        self.stop()  # type: ignore[attr-defined]
        if self._cap is not None:  # pages cached before the cgroup existed are charged elsewhere: drop them
            memcap.evict_files(self.data_dir)  # type: ignore[attr-defined]
        self.start()  # type: ignore[attr-defined]
        applied: dict[str, Any] = {"shared_buffers": f"{kib}kB", "cache_bytes": kib * 1024}
        if image is not None:
            applied["loop_direct_io"] = image.direct_io
        if self._cap is not None:
            applied.update(os_page_cache=f"bounded: server processes in a memory cgroup (v{self._cap.version}) "
                                         f"limited to shared_buffers + {headroom // (1024 * 1024)} MiB",
                           memory_limit_bytes=self._cap.limit, memory_headroom_bytes=headroom)
        else:
            applied["os_page_cache"] = f"not bounded ({reason}): misses of shared_buffers may come from the OS cache"
        return applied

    def page_cache_dirs(self) -> tuple[Path, Path] | None:
        """The data directory twice with ``--page-source memory`` (what the restarts before every block evict and
        read back into the OS page cache, :meth:`SharedBuffers.os_cache_files`); else None."""
        if self._page_source != "memory":
            return None
        return self.data_dir, self.data_dir  # type: ignore[attr-defined]

    def attach_memory_cap(self) -> None:
        """After every start: the postmaster and its children join the cgroup (later children follow)."""
        if self._cap is not None:
            self._cap.adopt(self.pgcluster.pids)  # type: ignore[attr-defined]

    def remove_memory_cap(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.remove()


def _headroom(settings: dict[str, str], gucs: dict[str, str]) -> int:
    """``memory_headroom`` when given, else 128 MiB + what one query may hash and sort in memory: work_mem ×
    hash_mem_multiplier (2) for the leader and each parallel worker. Below that the kernel's OOM killer could end a
    backend in the middle of a query; above it the OS page cache gets whatever the backends leave unused."""
    from tdebench.api.footprint import size_setting

    if settings.get("memory_headroom"):
        return size_setting(settings["memory_headroom"], MIB, BASE_HEADROOM)
    work_mem = size_setting(gucs.get("work_mem"), 1024, 4 * MIB)
    workers = int(gucs.get("max_parallel_workers_per_gather") or 2)
    multiplier = float(gucs.get("hash_mem_multiplier") or 2.0)
    return BASE_HEADROOM + int((workers + 1) * multiplier * work_mem)


def check_headroom(settings: dict[str, str]) -> None:
    """UsageError unless ``memory_headroom`` (a tdebench option of the postgres engine) is a size of 16 MiB+."""
    from tdebench.api.footprint import MIB, size_setting
    from tdebench.errors import UsageError

    text = settings.get("memory_headroom")
    if text is not None and size_setting(text, MIB, -1) < 16 * MIB:
        raise UsageError(f"bad value '{text}' for the postgres setting memory_headroom",
                         "give a size of at least 16MB, e.g. memory_headroom=256MB")


def libdir(bindir: Path) -> Path:
    """The server's module directory (``pg_config --pkglibdir``, else the Debian layout next to ``bindir``)."""
    candidate = bindir.parent / "lib"
    return candidate if candidate.is_dir() else Path(os.devnull)
