"""The buffer pool's size for a memory ratio, and what keeps the OS page cache from serving what the pool misses.

InnoDB opens its data files with ``O_DIRECT`` (``innodb_flush_method``), so on a plain directory or a plain ext4
image a page the buffer pool misses is read from the disk. Two layers ignore that: ext4 serves ``O_DIRECT`` on an
encrypted (fscrypt) file as buffered I/O, and gocryptfs reads its cipher files through the page cache. On such a
twin the server (and the gocryptfs daemon) are put in a memory cgroup limited to the buffer pool + a headroom for
their private memory (:mod:`tdebench.engines.toolkit.memcap`), so that twin cannot keep the rest of its data in the
OS page cache either: otherwise it would read from memory what its plain twin reads from the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tdebench.api.cache import Cache, WarmCache
from tdebench.engines.mariadb.counters import buffer_pool_bytes
from tdebench.engines.toolkit import memcap, pagecache

MIB = 1024 * 1024
#: what the group holds beyond the buffer pool. A process joins the group after it started, and what it touched
#: before stays charged where it was (cgroup v2 never moves charges; v1's move_charge is a no-op on recent kernels):
#: mariadbd's start-up memory (about 60 MiB) is outside, and the group sees the pool filling, per-query buffers
#: (tmp_table_size 16 MiB, sort and join buffers) and the page cache. Measured with 112 MiB here: the fscrypt
#: twin's group held 45 MiB of anonymous memory (the 41 MiB pool and 4 MiB) and 114 MiB of page cache, 70% of the
#: loaded data; 32 MiB leaves the page cache what the queries do not use
HEADROOM = 32 * MIB
#: the gocryptfs daemon's buffers (its start-up heap is outside too), when it shares the group; its Go runtime is
#: held to it by GOMEMLIMIT (without, its heap reached 59 MiB under load, and the group's 64 MiB ended mariadbd)
FUSE_HEADROOM = 24 * MIB


def use_buffered_reads(options: dict[str, str]) -> None:
    """``--page-source memory``: ``innodb_flush_method=fsync`` where the options ask for ``O_DIRECT`` (reads go
    through the OS page cache; a non-direct method the user set stays)."""
    if "O_DIRECT" in str(options.get("innodb_flush_method", "O_DIRECT")).upper():
        options["innodb_flush_method"] = "fsync"


class BufferPoolSize(Cache):
    """InnoDB's buffer pool, sized (:meth:`MariadbMemory.resize_cache`); as a Galera cluster's, not kept across a
    restart (a cluster restart rebuilds the joiners' state: no cache survives as it was)."""

    setting = "innodb_buffer_pool_size"
    page_sources = ("disk", "memory")

    def resize(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        return self.instance.resize_cache(cache_bytes, page_source)

    def os_cache_files(self) -> tuple[Path, Path] | None:
        return self.instance.page_cache_dirs()


class BufferPool(BufferPoolSize, WarmCache):
    """A single server's buffer pool, also kept across a restart: its page list dumped and loaded
    (:mod:`tdebench.engines.mariadb.warm`)."""

    def save(self) -> dict[str, Any]:
        return self.instance.save_cache()

    def load(self, saved: dict[str, Any]) -> dict[str, Any]:
        return self.instance.load_cache(saved)


class MariadbMemory:
    """``resize_cache`` and the memory cgroup of :class:`tdebench.engines.mariadb.engine.MariadbInstance` (a
    mixin: it uses the instance's ``options``, ``config``, ``fs``, ``image``, ``root``, ``server_pids`` and its
    lifecycle methods)."""

    _cap: memcap.MemoryCap | None = None
    _page_source = ""

    def page_cache_escape(self) -> str:
        """Why ``O_DIRECT`` does not keep this instance's data out of the OS page cache ("" when it does)."""
        method = str(self.options.get("innodb_flush_method", "O_DIRECT"))  # type: ignore[attr-defined]
        if "O_DIRECT" not in method.upper():
            return f"innodb_flush_method={method} reads through the OS page cache"
        if getattr(self, "fs", None) is not None:
            return "gocryptfs reads and writes its cipher files through the OS page cache"
        image = getattr(self, "image", None)
        if image is not None and image.encrypted:
            return "ext4 encryption serves O_DIRECT as buffered I/O"
        return ""

    def resize_cache(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        """``innodb_buffer_pool_size`` in my.cnf, then a restart: the pool starts cold at its new size (dump and
        load at shutdown/start-up are off). Misses from the disk: where the page cache escapes ``O_DIRECT``, in a
        bounded cgroup. From memory: buffered reads (``innodb_flush_method=fsync``) of files read into the OS
        page cache after the restart."""
        options = self.options  # type: ignore[attr-defined]
        pool = buffer_pool_bytes(cache_bytes)
        options["innodb_buffer_pool_size"] = str(pool)
        if page_source == "memory":
            use_buffered_reads(options)
        self._page_source = page_source
        if self.root is not None:  # type: ignore[attr-defined]
            self._path("my.cnf").write_text(self._render_cnf())  # type: ignore[attr-defined]
        self.close_counters()  # type: ignore[attr-defined]
        os_cache = self._restart_from_memory() if page_source == "memory" else self._restart_from_disk(pool)
        size, method = self._pool_and_method()
        applied: dict[str, Any] = {"innodb_buffer_pool_size": size, "cache_bytes": size,
                                   "innodb_flush_method": method}
        image = getattr(self, "image", None)
        if image is not None:
            applied["loop_direct_io"] = image.direct_io
        applied.update(os_cache)
        return applied

    def _restart_from_memory(self) -> dict[str, Any]:
        """``--page-source memory``: a restart, then every data file dropped from the OS page cache and read back
        in (an fscrypt or gocryptfs twin's cache then holds plaintext pages, as it would on a server with the RAM);
        the restarts before every block fill it again, every twin's at once."""
        self.restart()  # type: ignore[attr-defined]
        filled = pagecache.refill(self.root, self.datadir)  # type: ignore[attr-defined]
        share = filled.get("page_cache_large_folio_share")
        laid = f", {share:.0%} of it in large folios" if share is not None else ""
        return {"os_page_cache": f"holds the data: buffered reads, {filled['page_cache_refilled_bytes'] // MIB} MiB "
                                 f"of data files read into it{laid}", **filled}

    def page_cache_dirs(self) -> tuple[Path, Path] | None:
        """(everything of this instance, its data directory) with ``--page-source memory``: what the restarts
        before every block evict and read back into the OS page cache (:meth:`BufferPoolSize.os_cache_files`)."""
        if self._page_source != "memory":
            return None
        return self.root, self.datadir  # type: ignore[attr-defined]

    def _restart_from_disk(self, pool: int) -> dict[str, Any]:
        """Misses from the disk: direct I/O on an image; where the page cache escapes ``O_DIRECT``, the server in a
        memory cgroup of the pool + a headroom, started with its files evicted; the OS cache's facts."""
        image, fs = getattr(self, "image", None), getattr(self, "fs", None)
        if image is not None:
            image.use_direct_io()
        escape = self.page_cache_escape()
        reason = memcap.unavailable() if escape else ""
        headroom = HEADROOM + (FUSE_HEADROOM if fs is not None else 0)
        if escape and not reason:
            if self._cap is None:
                self._cap = memcap.MemoryCap(self.config.label)  # type: ignore[attr-defined]
            self._cap.set_limit(pool + headroom)
            if fs is not None:  # applies from the remount below
                fs.go_memory_limit = FUSE_HEADROOM
            self.stop()  # type: ignore[attr-defined]
            memcap.evict_files(self.root)  # type: ignore[attr-defined]  # cached by the load, charged elsewhere
            self.start()  # type: ignore[attr-defined]
        else:
            self.restart()  # type: ignore[attr-defined]
        if escape and self._cap is not None:
            out: dict[str, Any] = {
                "os_page_cache": f"bounded ({escape}): the server's processes in a memory cgroup "
                                 f"(v{self._cap.version}) limited to the buffer pool + {headroom // MIB} MiB",
                "memory_limit_bytes": self._cap.limit, "memory_headroom_bytes": headroom}
            if fs is not None:
                out["gocryptfs_go_memory_limit_bytes"] = fs.go_memory_limit
            return out
        if escape:
            return {"os_page_cache": f"not bounded ({escape}; {reason}): pages the buffer pool misses may come "
                                     "from the OS page cache"}
        return {"os_page_cache": "bypassed for data files (O_DIRECT)"}

    def _pool_and_method(self) -> tuple[int, str]:
        conn = self._connect(timeout=10, use_database=False)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            cur.execute("SELECT @@GLOBAL.innodb_buffer_pool_size, @@GLOBAL.innodb_flush_method")
            size, method = cur.fetchone()
        finally:
            conn.close()
        return int(size), str(method)

    def counters(self) -> dict[str, float]:
        """The server's counters, plus ``oom_kills`` of its memory cgroup when it has one."""
        out: dict[str, float] = super().counters()  # type: ignore[misc]
        kills = self._cap.oom_kills() if self._cap is not None else None
        if kills is not None:
            out["oom_kills"] = kills
        return out

    def attach_memory_cap(self) -> None:
        """After every start: mariadbd (and the gocryptfs daemon) join the cgroup."""
        if self._cap is not None:
            self._cap.adopt(self.server_pids)  # type: ignore[attr-defined]

    def remove_memory_cap(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.remove()
