"""The page ciphers of SQLite3 Multiple Ciphers, timed through SQLite3MC itself, per 4 KiB page.

No Python package offers these implementations (``pyaegis`` builds libaegis from source; the ``ascon`` package is
pure Python, far slower than C), and SQLite3MC's own code is what its engine runs, so each cipher is timed where
it works: a database of about 1,500 pages in ``/dev/shm`` (no disk), written once (the timed ``COMMIT`` encrypts
and writes every page) and read back with a 16-page cache (a ``count(*)`` reads and decrypts every page). A plain
database of the same library is built beside it and read in alternation with it; a cipher's cost per page is its
CPU time minus the plain database's, so read()/write() and SQLite's own work cancel out. AEGIS adds so little
(a few hundred ns per page) that single repetitions of it are noisy: the median is the figure. Speeds are page bytes per CPU second of that
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
READS = 7


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


def _build(path: Path, page: PageCipher | None, key: str) -> tuple[int, int]:
    """A fresh database of ~1,500 pages: (pages, CPU ns of the COMMIT that encrypts and writes them all)."""
    path.unlink(missing_ok=True)
    conn = _open(path, page, key, -400_000)
    try:
        conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
        conn.execute("BEGIN")
        conn.execute(f"WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {ROWS}) "
                     "INSERT INTO t SELECT i, printf('%.40c', 'x') || i FROM g")
        write_ns = _cpu(lambda: conn.execute("COMMIT"))
        return int(conn.execute("PRAGMA page_count").fetchall()[0][0]), write_ns
    finally:
        conn.close()


def _pair(directory: Path, page: PageCipher) -> tuple[float, float]:
    """One paired repetition: (encrypt, decrypt) CPU ns per page that ``page`` adds to a plain database built and
    read right beside it (each read of one alternates with a read of the other, so drift hits both)."""
    key = secrets.token_hex(page.key_bytes)
    plain_path, path = directory / "plain.db", directory / f"{page.cipher}{page.algorithm}.db"
    plain_pages, plain_w = _build(plain_path, None, key)
    pages, w = _build(path, page, key)
    plain, ciphered = _open(plain_path, None, key, 16), _open(path, page, key, 16)
    query = "SELECT count(*) FROM t WHERE b IS NOT NULL"
    try:
        diffs = [_cpu(lambda: ciphered.execute(query).fetchall()) / pages
                 - _cpu(lambda: plain.execute(query).fetchall()) / plain_pages for _ in range(READS)]
    finally:
        plain.close()
        ciphered.close()
        plain_path.unlink(missing_ok=True)
        path.unlink(missing_ok=True)
    return w / pages - plain_w / plain_pages, statistics.median(diffs)


def measure(wanted: list[str], seconds_each: float) -> list[tuple[PageCipher, list[float], list[float]]]:
    """For each wanted cipher: (it, encrypt ns per page, decrypt ns per page) of each paired repetition (at least
    3, more as ``seconds_each`` allows, at most 15)."""
    chosen = [c for c in PAGE_CIPHERS if c.name.upper() in {w.upper() for w in wanted}]
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    out = []
    with tempfile.TemporaryDirectory(prefix="tdebench-pages-", dir=base) as tmp:
        directory = Path(tmp)
        if chosen:
            _pair(directory, chosen[0])  # warm-up
        for page in chosen:
            enc, dec = [], []
            started = time.thread_time()
            while len(enc) < 3 or (time.thread_time() - started < seconds_each and len(enc) < 15):
                e, d = _pair(directory, page)
                enc.append(e)
                dec.append(d)
            out.append((page, enc, dec))
    return out
