"""This machine's cipher throughput per core, and the cipher floor it implies.

Each mechanism's floor uses its own cipher and unit: OpenSSL's ciphers per 16 KiB buffer (DuckDB's and InnoDB's
blocks, gocryptfs' 4 KiB blocks sealed one AEAD call each), the kernel's AES-256-XTS per 4 KiB data unit where
AF_ALG reaches it (:mod:`tdebench.measure.kernel_ciphers`, fscrypt), and SQLite3MC's page ciphers per 4 KiB page
through SQLite3MC itself (:mod:`tdebench.measure.page_ciphers`: ChaCha20-Poly1305, AES-CBC, SQLCipher, Ascon-128,
AEGIS).

:func:`measure_ciphers` times every cipher an encryption spec can name (AES-128/192/256 in CBC, CTR and GCM,
AES-128/256-XTS, 3DES-CBC, ChaCha20-Poly1305, AES-SIV-512) plus HMAC-SHA512 (SQLCipher's page MAC), through the
``cryptography`` package (OpenSSL), like ``openssl speed -evp``: one cipher context, the same ``block_bytes``
buffer (16 KiB) passed to it again and again, for a fixed budget of CPU time after a short warm-up; the result is
the median of several repetitions. Time is this thread's CPU time (``time.thread_time_ns``), so other load on the
machine shrinks the figures less than wall time would; they are per core. Figures include a Python call per
buffer (0.2-0.5 µs, ~15% of a 16 KiB call at 6 GB/s); for stream-fed ciphers that cost is measured per cipher
(16-byte calls) and subtracted, since a DBMS calls OpenSSL from C (``overhead_ns`` on each entry;
``correct_overhead=False`` gives the raw figures).

:func:`cipher_floor_seconds` turns bytes a server read and wrote into the least time encryption itself can add;
:func:`speed_for_spec` picks the (encrypt, decrypt) speeds an :class:`~tdebench.encryption.EncryptionSpec` implies,
and :func:`cipher_for_spec` says which table entry stands for a spec and how exact that is.

Keys, IVs and data come from :mod:`secrets`; keys are thrown away after timing and never stored.
"""

from __future__ import annotations

import json
import math
import os
import platform
import secrets
import statistics
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV, ChaCha20Poly1305

from tdebench.encryption import EncryptionSpec, parse_spec
from tdebench.errors import UsageError
from tdebench.measure import kernel_ciphers, page_ciphers

try:  # cryptography >= 43 moved TripleDES to "decrepit"; older versions only have it here
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
except ImportError:  # pragma: no cover - depends on the installed cryptography
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TripleDES = algorithms.TripleDES  # type: ignore[attr-defined,misc]

ENCRYPT, DECRYPT, MAC = "encrypt", "decrypt", "mac"
MIB = 1024 * 1024
FORMAT = "tdebench-ciphers"
FORMAT_VERSION = 1
DEFAULT_SECONDS = 0.3
DEFAULT_BLOCK = 16384
REPEATS = 5
REFERENCE = "AES-256-CTR"  # the CLI shows every speed relative to this one

Step = Callable[[], Any]


@dataclass(frozen=True)
class CipherSpeed:
    """Throughput of one cipher and operation on one core (bytes of plaintext per CPU second)."""

    name: str
    operation: str
    bytes_per_second: float
    block_bytes: int
    note: str = ""
    samples: tuple[float, ...] = ()  # bytes per second of each repetition; the median is bytes_per_second
    overhead_ns: float = 0.0         # per-call cost (Python, binding) subtracted from each call; 0: raw figure

    @property
    def mib_per_second(self) -> float:
        """MB/s as the studies and ``openssl speed`` tables use it: 1 MB = 1024² bytes."""
        return self.bytes_per_second / MIB

    @property
    def gb_per_second(self) -> float:
        """Decimal GB/s (10⁹ bytes), as ``openssl speed`` counts them."""
        return self.bytes_per_second / 1e9

    @property
    def spread_pct(self) -> float:
        """(max - min) / median of the repetitions, in %: how noisy this figure is (0 with one repetition)."""
        if len(self.samples) < 2 or self.bytes_per_second <= 0:
            return 0.0
        return (max(self.samples) - min(self.samples)) / self.bytes_per_second * 100

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["samples"] = [round(x, 1) for x in self.samples]
        data["mib_per_second"] = round(self.mib_per_second, 3)
        data["gb_per_second"] = round(self.gb_per_second, 6)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CipherSpeed":
        return cls(str(data["name"]), str(data["operation"]), float(data["bytes_per_second"]),
                   int(data["block_bytes"]), str(data.get("note", "")),
                   tuple(float(x) for x in data.get("samples", ())), float(data.get("overhead_ns", 0.0)))


# --- the ciphers -------------------------------------------------------------------------------------------

def _stream(make_cipher: Callable[[], Cipher]) -> Callable[[str, bytes], Step]:
    """A cipher used as a stream of updates on one context (CBC, CTR, GCM, XTS, 3DES), as openssl speed does."""

    def factory(operation: str, data: bytes) -> Step:
        cipher = make_cipher()
        ctx = cipher.encryptor() if operation == ENCRYPT else cipher.decryptor()
        out = bytearray(len(data) + 32)
        update_into = ctx.update_into
        return lambda: update_into(data, out)

    return factory


def _aes(bits: int, mode: str) -> Callable[[], Cipher]:
    def make() -> Cipher:
        if mode == "xts":  # two AES keys of `bits` each; the halves must differ (they do, from secrets)
            return Cipher(algorithms.AES(secrets.token_bytes(bits // 4)), modes.XTS(secrets.token_bytes(16)))
        key = algorithms.AES(secrets.token_bytes(bits // 8))
        if mode == "cbc":
            return Cipher(key, modes.CBC(secrets.token_bytes(16)))
        if mode == "ctr":
            return Cipher(key, modes.CTR(secrets.token_bytes(16)))
        return Cipher(key, modes.GCM(secrets.token_bytes(12)))  # decryptor without a tag: never finalized

    return make


def _3des() -> Cipher:
    return Cipher(TripleDES(secrets.token_bytes(24)), modes.CBC(secrets.token_bytes(8)))


def _aead(kind: str) -> Callable[[str, bytes], Step]:
    """One AEAD call per buffer (nonce + tag each), as a file system encrypting fixed-size blocks does."""

    def factory(operation: str, data: bytes) -> Step:
        if kind == "chacha":
            aead, nonce = ChaCha20Poly1305(secrets.token_bytes(32)), secrets.token_bytes(12)
            into = hasattr(aead, "encrypt_into")  # cryptography >= 45: no allocation per call
            if operation == ENCRYPT:
                sealed_buf = bytearray(len(data) + 16)
                if into:
                    return lambda: aead.encrypt_into(nonce, data, None, sealed_buf)
                return lambda: aead.encrypt(nonce, data, None)
            sealed, plain_buf = aead.encrypt(nonce, data, None), bytearray(len(data))
            if into:
                return lambda: aead.decrypt_into(nonce, sealed, None, plain_buf)
            return lambda: aead.decrypt(nonce, sealed, None)
        siv = AESSIV(secrets.token_bytes(64))  # AES-SIV with a 512-bit key (two AES-256 keys), as gocryptfs
        if operation == ENCRYPT:
            return lambda: siv.encrypt(data, None)
        sealed = siv.encrypt(data, None)
        return lambda: siv.decrypt(sealed, None)

    return factory


def _hmac_sha512(operation: str, data: bytes) -> Step:
    ctx = hmac.HMAC(secrets.token_bytes(64), hashes.SHA512())
    return lambda: ctx.update(data)


@dataclass(frozen=True)
class _Entry:
    name: str
    operations: tuple[str, ...]
    factory: Callable[[str, bytes], Step]
    note: str = ""
    streaming: bool = True  # one context fed buffer after buffer: the per-call cost is not the cipher's


_BOTH = (ENCRYPT, DECRYPT)


def _catalogue() -> list[_Entry]:
    entries = [_Entry(f"AES-{bits}-{mode.upper()}", _BOTH, _stream(_aes(bits, mode)))
               for mode in ("cbc", "ctr", "gcm") for bits in (128, 192, 256)]
    entries += [
        _Entry("AES-128-XTS", _BOTH, _stream(_aes(128, "xts")), "256-bit key (two AES-128 keys)"),
        _Entry("AES-256-XTS", _BOTH, _stream(_aes(256, "xts")), "512-bit key (two AES-256 keys)"),
        _Entry("3DES-CBC", _BOTH, _stream(_3des), "DES-EDE3, 192-bit key (168 effective)"),
        _Entry("ChaCha20-Poly1305", _BOTH, _aead("chacha"), "one AEAD call (nonce+tag) per buffer", False),
        _Entry("AES-SIV-512", _BOTH, _aead("siv"), "one AEAD call per buffer; OpenSSL's AES-SIV", False),
        _Entry("HMAC-SHA512", (MAC,), _hmac_sha512, "SQLCipher's per-page MAC"),
    ]
    if not kernel_ciphers.usable():
        entries.append(_Entry(kernel_ciphers.NAME, _BOTH, kernel_ciphers.step, kernel_ciphers.NOTE, False))
    return entries


def cipher_names() -> list[str]:
    """Every cipher :func:`measure_ciphers` measures, in table order."""
    return [entry.name for entry in _catalogue()] + page_ciphers.names()


def _page_speeds(names: list[str], seconds_each: float) -> list[CipherSpeed]:
    """SQLite3MC's page ciphers (:mod:`tdebench.measure.page_ciphers`): page bytes per CPU second of the work a
    cipher adds to a plain database's; a median lost in the noise (at most 0) is shown as 1 ns per page."""
    out = []
    for page, enc, dec in page_ciphers.measure(names, seconds_each):
        for operation, times in ((ENCRYPT, enc), (DECRYPT, dec)):
            ns = max(statistics.median(times), 1.0)
            # repetitions lost in the noise (at most 0) are left out of the spread, not turned into huge rates
            rates = tuple(page_ciphers.PAGE / (t / 1e9) for t in times if t > 0)
            out.append(CipherSpeed(page.name, operation, page_ciphers.PAGE / (ns / 1e9), page_ciphers.PAGE,
                                   page_ciphers.NOTE, rates))
    return out


# --- timing ------------------------------------------------------------------------------------------------

def _run_for(step: Step, cpu_seconds: float, batch: int) -> tuple[int, int]:
    """Call ``step`` in batches until ``cpu_seconds`` of this thread's CPU time passed: (calls, CPU ns)."""
    budget = int(cpu_seconds * 1e9)
    wall_limit = time.perf_counter() + 10 * cpu_seconds + 1.0  # a starved thread still ends
    calls, start = 0, time.thread_time_ns()
    while True:
        for _ in range(batch):
            step()
        calls += batch
        used = time.thread_time_ns() - start
        if used >= budget or time.perf_counter() > wall_limit:
            return calls, max(used, 1)


def _calibrate(step: Step, seconds_each: float) -> int:
    """Warm ``step`` up; return how many calls take about 2 ms (how often the clock is read)."""
    warm_calls, warm_ns = _run_for(step, max(0.01, seconds_each * 0.1), 1)
    return max(1, int(2e6 / (warm_ns / warm_calls)))


TINY = 16  # bytes: a call that does (almost) no cipher work, to measure what a call costs


def _per_call_ns(step: Step, seconds: float) -> float:
    """Median CPU ns per call of ``step`` over 3 slices of ``seconds`` in all."""
    batch = _calibrate(step, seconds / 3)
    samples = []
    for _ in range(3):
        calls, cpu_ns = _run_for(step, seconds / 3, batch)
        samples.append(cpu_ns / calls)
    return statistics.median(samples)


def _check_args(seconds_each: float, block_bytes: int) -> None:
    if not isinstance(seconds_each, (int, float)) or not math.isfinite(seconds_each) or seconds_each <= 0:
        raise UsageError(f"cipher time budget must be a positive number of seconds, not {seconds_each}",
                         "give e.g. --seconds 0.3 (each cipher and operation is timed for about that long)")
    if block_bytes < 16 or block_bytes % 16 or block_bytes > 64 * MIB:
        raise UsageError(f"cipher buffer size must be a multiple of 16 bytes from 16 B to 64 MiB, not {block_bytes}",
                         "give e.g. --block-bytes 16384 (openssl speed's largest default size)")


def measure_ciphers(seconds_each: float = DEFAULT_SECONDS, block_bytes: int = DEFAULT_BLOCK,
                    names: Iterable[str] | None = None, repeats: int = REPEATS,
                    progress: Callable[[int, int], None] | None = None,
                    correct_overhead: bool = True) -> list[CipherSpeed]:
    """Time every cipher (or only ``names``) in both directions; about 1.1 × ``seconds_each`` CPU time each.

    Each cipher is warmed up, then timed in ``repeats`` slices of ``seconds_each / repeats``, taken in rounds
    over all ciphers (interleaved, as trials are); the speed is the median slice. ``progress(done, total)`` is
    called after each slice (for a progress bar).

    ``correct_overhead``: for ciphers fed as a stream (all but the AEADs), what a call costs beyond the cipher
    work (Python, the binding, the GIL: 0.2-0.5 µs, measured per cipher with 16-byte calls) is subtracted from
    each call, at most half of it; otherwise the fastest 16 KiB figures would be ~15% low. A DBMS calls OpenSSL
    from C, so these per-byte figures are the ones to divide bytes by. AEADs (ChaCha20-Poly1305, AES-SIV) keep
    their per-call cost: nonce, key setup and tag are real work for every sealed block.
    """
    _check_args(seconds_each, block_bytes)
    if repeats < 1:
        raise UsageError(f"repetitions must be at least 1, not {repeats}", "give repeats=5 (the default)")
    catalogue = [e for e in _catalogue() if e.name != kernel_ciphers.NAME or block_bytes % kernel_ciphers.UNIT == 0]
    pages = page_ciphers.names()
    if names is not None:
        wanted = {n.upper() for n in names}
        unknown = wanted - {e.name.upper() for e in catalogue} - {p.upper() for p in pages}
        if unknown:
            raise UsageError(f"unknown cipher(s): {', '.join(sorted(unknown))}",
                             f"choose from {', '.join(cipher_names())}")
        catalogue = [e for e in catalogue if e.name.upper() in wanted]
        pages = [p for p in pages if p.upper() in wanted]
    data, tiny = secrets.token_bytes(block_bytes), secrets.token_bytes(TINY)
    jobs = [(entry, operation, entry.factory(operation, data)) for entry in catalogue for operation in entry.operations]
    total, done = len(jobs) * (repeats + 1), 0
    batches, tiny_ns = [], []
    for entry, operation, step in jobs:
        batches.append(_calibrate(step, seconds_each))
        wanted = correct_overhead and entry.streaming and block_bytes > TINY
        tiny_ns.append(_per_call_ns(entry.factory(operation, tiny), max(0.006, seconds_each / 5)) if wanted else 0.0)
        done += 1
        if progress is not None:
            progress(done, total)
    per_call: list[list[float]] = [[] for _ in jobs]
    for _ in range(repeats):  # rounds over all ciphers, so drift of the machine hits every cipher alike
        for i, (_, _, step) in enumerate(jobs):
            calls, cpu_ns = _run_for(step, seconds_each / repeats, batches[i])
            per_call[i].append(cpu_ns / calls)
            done += 1
            if progress is not None:
                progress(done, total)
    table = []
    for (entry, operation, _), times, tiny_call in zip(jobs, per_call, tiny_ns):
        # the part of a 16-byte call that is not cipher work, at most half a call
        overhead = min(max(0.0, tiny_call - TINY * statistics.median(times) / block_bytes), min(times) / 2)
        rates = tuple(block_bytes / ((t - overhead) / 1e9) for t in times)
        table.append(CipherSpeed(entry.name, operation, statistics.median(rates), block_bytes, entry.note, rates,
                                 round(overhead, 1)))
    return table + _page_speeds(pages, seconds_each)


# --- lookups and the floor ---------------------------------------------------------------------------------

def lookup(table: Iterable[CipherSpeed], name: str, operation: str) -> CipherSpeed | None:
    """The entry for ``name`` and ``operation`` (case-insensitive name), or None."""
    for speed in table:
        if speed.name.upper() == name.upper() and speed.operation == operation:
            return speed
    return None


def cipher_floor_seconds(bytes_read: int, bytes_written: int, decrypt_bps: float, encrypt_bps: float) -> float:
    """The least time encryption itself can add: bytes read ÷ decrypt speed + bytes written ÷ encrypt speed.

    With several busy cores the wall-clock floor is lower (divide by the cores encrypting in parallel); this is
    the CPU time of the cipher work on one core.
    """
    if bytes_read < 0 or bytes_written < 0:
        raise ValueError(f"byte counts must not be negative (read {bytes_read}, written {bytes_written})")
    if not (decrypt_bps > 0 and encrypt_bps > 0):
        raise ValueError(f"cipher speeds must be positive (decrypt {decrypt_bps}, encrypt {encrypt_bps})")
    return bytes_read / decrypt_bps + bytes_written / encrypt_bps


@dataclass(frozen=True)
class CipherMapping:
    """Which measured cipher stands for a spec: ``exact`` False means an approximation explained in ``note``."""

    name: str
    exact: bool = True
    note: str = ""
    mac: str | None = None  # a MAC the mechanism adds per page (SQLCipher: HMAC-SHA512), folded in on request


_DEFAULT_MODE = "cbc"  # MariaDB's default, MySQL's and SQL Server's only mode, pgcrypto's raw aes, SQLCipher's


def _sqlite3mc_floor(cipher: str) -> CipherMapping:
    name = {"aes-128-cbc": "AES-128-CBC", "aes-256-cbc": "AES-256-CBC", "chacha20": "ChaCha20-Poly1305",
            "sqlcipher": "SQLCipher", "ascon128": "Ascon-128", "aegis": "AEGIS-256"}.get(cipher, cipher.upper())
    return CipherMapping(f"SQLite3MC {name}", True, "SQLite3MC's own page cipher, timed per 4 KiB page through "
                                                    "SQLite3MC (MAC included where the scheme has one)")


#: mechanisms whose floor is a page cipher of their own, timed through the library: (mechanism, entry of a cipher)
PAGE_CIPHER_FLOORS = (("sqlite3mc", _sqlite3mc_floor),)


#: the ciphers a spec names whole (no key size or mode to read in the name)
_FIXED_CIPHERS = {
    "3des": CipherMapping("3DES-CBC"),
    "gocryptfs": CipherMapping("AES-256-GCM", True, "gocryptfs seals 4 KiB blocks, each with its own nonce and tag; "
                               "FUSE costs are not included"),
    "gocryptfs-xchacha": CipherMapping("ChaCha20-Poly1305", False, "XChaCha20-Poly1305 approximated by "
                                       "ChaCha20-Poly1305 (one extra HChaCha20 per block)"),
    "gocryptfs-aessiv": CipherMapping("AES-SIV-512", False, "OpenSSL's AES-SIV-512; gocryptfs uses its own Go "
                                      "implementation, which may be slower"),
    "fscrypt": CipherMapping("AES-256-XTS", False, "OpenSSL's AES-256-XTS; fscrypt encrypts file contents with the "
                             "kernel's, one 4 KiB data unit at a time (`tdebench ciphers` shows both)"),
}


def cipher_for_spec(spec: EncryptionSpec | str) -> CipherMapping | None:
    """The table entry that bounds what ``spec`` costs; None for ``none``."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    if spec.is_plain:
        return None
    cipher = spec.cipher
    own = next((floor for mechanism, floor in PAGE_CIPHER_FLOORS if mechanism == spec.mechanism), None)
    if own is not None:
        return own(cipher)
    if cipher.startswith("aes-"):
        bits, mode = spec.key_bits, spec.mode or _DEFAULT_MODE
        if mode == "xts" and bits == 192:
            return CipherMapping("AES-256-XTS", False, "there is no AES-192-XTS; AES-256-XTS shown")
        note = "" if spec.mode else "no mode given: CBC, the default of MariaDB/MySQL/SQL Server/pgcrypto"
        if spec.mechanism == "sqlcipher":
            note = "cipher only; SQLCipher also computes HMAC-SHA512 per page (include_mac=True adds it)"
            return CipherMapping(f"AES-{bits}-{mode.upper()}", True, note, mac="HMAC-SHA512")
        return CipherMapping(f"AES-{bits}-{mode.upper()}", True, note)
    if cipher.startswith("pgp-"):
        algo = cipher[4:]
        name = "3DES-CBC" if algo == "3des" else f"AES-{algo[3:]}-CBC"
        return CipherMapping(name, False, "OpenPGP uses CFB mode, approximated by CBC (same serial encrypt, "
                                          "parallel decrypt); its per-value S2K key derivation and SHA-1 MDC "
                                          "are not included")
    return _FIXED_CIPHERS.get(cipher)


def speed_for_spec(spec: EncryptionSpec | str, table: Iterable[CipherSpeed],
                   include_mac: bool = False) -> tuple[float, float] | None:
    """(encrypt_bps, decrypt_bps) of the cipher standing for ``spec``; None for ``none`` or if not in ``table``.

    ``include_mac`` folds a per-page MAC the mechanism adds (SQLCipher's HMAC-SHA512) into both directions:
    1/speed = 1/cipher + 1/mac.
    """
    mapping = cipher_for_spec(spec)
    if mapping is None:
        return None
    entries = list(table)
    enc, dec = lookup(entries, mapping.name, ENCRYPT), lookup(entries, mapping.name, DECRYPT)
    if enc is None or dec is None:
        return None
    enc_bps, dec_bps = enc.bytes_per_second, dec.bytes_per_second
    if include_mac and mapping.mac:
        mac = lookup(entries, mapping.mac, MAC)
        if mac is None:
            return None
        enc_bps = 1 / (1 / enc_bps + 1 / mac.bytes_per_second)
        dec_bps = 1 / (1 / dec_bps + 1 / mac.bytes_per_second)
    return enc_bps, dec_bps


def floor_for_spec(spec: EncryptionSpec | str, table: Iterable[CipherSpeed], bytes_read: int, bytes_written: int,
                   include_mac: bool = False) -> float | None:
    """:func:`cipher_floor_seconds` for ``spec``; None when the spec is plain or its cipher was not measured."""
    speeds = speed_for_spec(spec, table, include_mac)
    if speeds is None:
        return None
    encrypt_bps, decrypt_bps = speeds
    return cipher_floor_seconds(bytes_read, bytes_written, decrypt_bps, encrypt_bps)


# --- machine facts and the JSON file -----------------------------------------------------------------------

def cpu_facts() -> dict[str, Any]:
    """CPU model and whether it has AES-NI (the ``aes`` flag in /proc/cpuinfo; None if unreadable)."""
    model, flags = platform.processor() or platform.machine(), None
    try:
        first_cpu = Path("/proc/cpuinfo").read_text().strip().split("\n\n")[0]
    except OSError:
        first_cpu = ""
    for line in first_cpu.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            model = value.strip()
        elif key.strip() in ("flags", "Features"):
            flags = set(value.split())
    aes = None if flags is None else ("aes" in flags)
    return {"cpu_model": model, "aes_ni": aes, "cores": os.cpu_count()}


def _library_versions() -> dict[str, str]:
    import cryptography

    versions = {"cryptography": cryptography.__version__}
    try:
        from cryptography.hazmat.backends.openssl import backend

        versions["openssl"] = backend.openssl_version_text()
    except Exception:  # noqa: BLE001 - informational only
        pass
    return versions


def table_to_json(table: Iterable[CipherSpeed], seconds_each: float | None = None) -> dict[str, Any]:
    """The table with the facts needed to read it later (CPU, AES-NI, library versions, method)."""
    entries = list(table)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **cpu_facts(),
        **_library_versions(),
        "kernel_xts": kernel_ciphers.usable() or "measured through AF_ALG",
        "sqlite3mc_pages": page_ciphers.usable() or "measured through SQLite3MC",
        "method": ("cryptography, one call per buffer, per-call overhead (16-byte calls) subtracted for "
                   "stream-fed ciphers; median of interleaved repetitions; bytes per CPU second of one thread"),
        "seconds_each": seconds_each,
        "block_bytes": entries[0].block_bytes if entries else None,
        "entries": [speed.to_dict() for speed in entries],
    }


def save_table(path: Path, table: Iterable[CipherSpeed], seconds_each: float | None = None) -> Path:
    """Write the table as JSON (atomically: temp file + rename), e.g. into a run directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(table_to_json(table, seconds_each), indent=2) + "\n")
    os.replace(tmp, path)
    return path


def load_table(path: Path) -> list[CipherSpeed]:
    """Read a table written by :func:`save_table`."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read cipher table {path}: {exc}",
                         "give a file written by `tdebench ciphers --out`") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{path} is not a tdebench cipher table", "give a file written by `tdebench ciphers --out`")
    return [CipherSpeed.from_dict(item) for item in data.get("entries", [])]
