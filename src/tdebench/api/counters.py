"""The names of engine counters (:meth:`tdebench.api.engine.Instance.counters`), with their units and meaning.

Counters are cumulative; tdebench records the difference over each step. An engine reports the ones it can
count and says in its docs how (docs/engines/*.md).
"""

from __future__ import annotations

#: name -> (unit, meaning)
COUNTERS: dict[str, tuple[str, str]] = {
    "pages_read": ("pages", "pages read from storage into the engine's cache (cache misses that went to a file)"),
    "pages_written": ("pages", "pages written from the cache to the data files"),
    "pages_created": ("pages", "new pages allocated in the cache"),
    "cache_requests": ("pages", "logical page reads served from or through the cache"),
    "cache_misses": ("pages", "logical page reads the cache could not serve (pages read from storage, read-ahead "
                              "included)"),
    "pages_read_ahead": ("pages", "pages read from storage ahead of a request (prefetch; part of cache_misses)"),
    "page_size": ("bytes", "the size of one page (a setting, not a delta)"),
    "bytes_read": ("bytes", "bytes read from the database's files (through the OS, cached or not)"),
    "bytes_written": ("bytes", "bytes written to the database's files"),
    "bytes_decrypted": ("bytes", "bytes the engine decrypted (pages or values)"),
    "bytes_encrypted": ("bytes", "bytes the engine encrypted (pages or values)"),
    "bytes_decrypted_estimate": ("bytes", "an estimate of the bytes decrypted where nothing counts them (gocryptfs, "
                                          "fscrypt: see the engine's docs for what it counts)"),
    "bytes_encrypted_estimate": ("bytes", "an estimate of the bytes encrypted where nothing counts them"),
    "image_bytes_read": ("bytes", "bytes read from the ext4 image through its loop device (/sys/block/loopN/stat): "
                                  "file blocks, ext4 metadata and journal; under fs:fscrypt the file blocks are "
                                  "ciphertext the kernel decrypted"),
    "image_bytes_written": ("bytes", "bytes written to the ext4 image through its loop device: file blocks (under "
                                     "fs:fscrypt, encrypted by the kernel on write-back), metadata and journal"),
    "log_bytes": ("bytes", "redo log / WAL bytes written"),
    "temp_bytes": ("bytes", "bytes written to temporary (spill) files"),
    "values_decrypted": ("values", "column values decrypted (column encryption)"),
    "values_read_encrypted": ("values", "encrypted column values in the rows read from encrypted tables: an upper "
                                        "bound of the values decrypted (column encryption, where no exact count "
                                        "exists)"),
    "cert_failures": ("transactions", "write sets that failed certification on a cluster (sum over its nodes)"),
    "flow_control_paused_ns": ("ns", "time a cluster's replication was paused by flow control (sum over its nodes)"),
    "oom_kills": ("processes", "server processes the kernel killed for reaching the memory limit tdebench set"),
}

#: counters that are settings read at the end of a step, not differences over it
LEVELS = frozenset({"page_size"})


def unit_of(name: str) -> str:
    """The unit of counter ``name`` ("" for a name outside the vocabulary)."""
    return COUNTERS.get(name, ("", ""))[0]
