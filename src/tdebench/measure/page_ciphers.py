"""The page ciphers of SQLite3 Multiple Ciphers, timed through SQLite3MC itself, per 4 KiB page.

No Python package offers these implementations (``pyaegis`` builds libaegis from source; the ``ascon`` package is
pure Python, far slower than C), and SQLite3MC's own code is what its engine runs, so each cipher is timed where
it works: a database of about 1,500 pages in ``/dev/shm`` (no disk), written once (the timed ``COMMIT`` encrypts
and writes every page) and read back with a 16-page cache (a ``count(*)`` reads and decrypts every page). The same
is done on a plain database with the same library, interleaved; a cipher's cost per page is its CPU time minus the
plain database's, so read()/write() and SQLite's own work cancel out. Speeds are page bytes per CPU second of that
difference (one thread); the AEAD ciphers include their MAC, the SQLCipher scheme its HMAC-SHA512.
"""

from __future__ import annotations

import os
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PAGE = 4096
ROWS = 100_000  # ~1,500 pages of 4 KiB
READS = 5


@dataclass(frozen=True)
class PageCipher:
    """One SQLite3MC scheme: the table name, its ``PRAGMA cipher`` (and AEGIS ``algorithm``), key bytes."""

    name: str
    cipher: str
    algorithm: str = ""
    key_bytes: int = 32


PAGE_CIPHERS = [
    PageCipher("SQLite3MC ChaCha20-Poly1305", "chacha20"),
    PageCipher("SQLite3MC AES-128-CBC", "aes128cbc", key_bytes=16),
    PageCipher("SQLite3MC AES-256-CBC", "aes256cbc"),
    PageCipher("SQLite3MC SQLCipher", "sqlcipher"),
    PageCipher("SQLite3MC Ascon-128", "ascon128"),
    *[PageCipher(f"SQLite3MC AEGIS-{v.upper()}", "aegis", f"aegis-{v}")
      for v in ("128l", "128x2", "128x4", "256", "256x2", "256x4")],
]
NOTE = "per 4 KiB page through SQLite3MC (its own code), minus the same work on a plain database"


def usable() -> str:
    """"" when apsw-sqlite3mc is installed; else why not."""
    try:
        import apsw

        conn = apsw.Connection(":memory:")
        conn.execute("SELECT sqlite3mc_version()").fetchall()
        conn.close()
    except Exception as exc:  # noqa: BLE001
        return f"apsw-sqlite3mc is not usable ({exc})"
    return ""


def names() -> list[str]:
    return [c.name for c in PAGE_CIPHERS] if not usable() else []


def _open(path: Path, page: PageCipher | None, key: str, cache: int):
    import apsw

    conn = apsw.Connection(str(path))
    if page is not None:
        conn.execute(f"PRAGMA cipher = '{page.cipher}'").fetchall()
        if page.algorithm:
            conn.execute(f"PRAGMA algorithm = '{page.algorithm}'").fetchall()
        conn.execute(f"PRAGMA key = \"x'{key}'\"").fetchall()
    for pragma in ("journal_mode = OFF", "synchronous = OFF", f"cache_size = {cache}", f"page_size = {PAGE}"):
        conn.execute(f"PRAGMA {pragma}").fetchall()
    return conn


def _cpu(work: Callable[[], object]) -> int:
    start = time.thread_time_ns()
    work()
    return time.thread_time_ns() - start


def _trial(directory: Path, page: PageCipher | None) -> tuple[int, float, float]:
    """(pages, CPU ns per page written, CPU ns per page read) for one fresh database."""
    key = secrets.token_hex(page.key_bytes if page else 32)
    path = directory / f"{page.cipher + page.algorithm if page else 'plain'}.db"
    path.unlink(missing_ok=True)
    conn = _open(path, page, key, -400_000)
    try:
        conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
        conn.execute("BEGIN")
        conn.execute(f"WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {ROWS}) "
                     "INSERT INTO t SELECT i, printf('%.40c', 'x') || i FROM g")
        write_ns = _cpu(lambda: conn.execute("COMMIT"))
        pages = int(conn.execute("PRAGMA page_count").fetchall()[0][0])
    finally:
        conn.close()
    conn = _open(path, page, key, 16)
    try:
        query = "SELECT count(*) FROM t WHERE b IS NOT NULL"
        read_ns = statistics.median(_cpu(lambda: conn.execute(query).fetchall()) for _ in range(READS))
    finally:
        conn.close()
        path.unlink(missing_ok=True)
    return pages, write_ns / pages, read_ns / pages


def measure(wanted: list[str], seconds_each: float) -> list[tuple[PageCipher, list[float], list[float]]]:
    """For each wanted cipher: (it, encrypt ns per page, decrypt ns per page) of each repetition (at least 3,
    more as ``seconds_each`` allows), each against a plain database measured right before it."""
    chosen = [c for c in PAGE_CIPHERS if c.name.upper() in {w.upper() for w in wanted}]
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    out = []
    with tempfile.TemporaryDirectory(prefix="tdebench-pages-", dir=base) as tmp:
        directory = Path(tmp)
        _trial(directory, None)  # warm-up
        for page in chosen:
            enc, dec = [], []
            started = time.thread_time()
            while len(enc) < 3 or (time.thread_time() - started < seconds_each and len(enc) < 15):
                _, plain_w, plain_r = _trial(directory, None)
                _, w, r = _trial(directory, page)
                enc.append(w - plain_w)
                dec.append(r - plain_r)
            out.append((page, enc, dec))
    return out
