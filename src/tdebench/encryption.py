"""Encryption specs (parse, print, validate) and key material.

Grammar (case-insensitive, no spaces)::

    spec      := "none" | mechanism ":" cipher [ "@" scope ]
    mechanism := "tde" | "sqlcipher" | "column" | "fs" | "sqlite3mc"
    cipher    := "aes-" bits [ "-" mode ] | "3des" | "pgp-" pgpalgo | fsname | mcname
    bits      := "128" | "192" | "256"
    mode      := "cbc" | "ctr" | "gcm" | "xts"
    scope     := word          (engine-defined, e.g. "tables" vs the default "all")

Examples: ``none``, ``sqlcipher:aes-256-cbc``, ``tde:aes-128-ctr``, ``tde:aes-256-cbc@tables``,
``column:aes-192``, ``column:pgp-aes256``, ``column:3des``, ``fs:gocryptfs``, ``fs:fscrypt``.

Whether an engine supports a spec is the engine's decision (``Engine.supports``); this module
only checks that the text is well formed.

Keys come from :mod:`secrets`. A :class:`SecretKey` never shows its value in ``repr``/``str``;
every key generated in this process is remembered so that text can be scrubbed
(:func:`redact`) before it is logged or written.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from tdebench.errors import UsageError

MECHANISMS = ("tde", "sqlcipher", "column", "fs", "sqlite3mc")
_AES = re.compile(r"^aes-(128|192|256)(?:-(cbc|ctr|gcm|xts))?$")
_PGP = re.compile(r"^pgp-(aes128|aes192|aes256|3des)$")
_FS = re.compile(r"^(?:gocryptfs(?:-(aessiv|xchacha))?|fscrypt(?:-adiantum)?)$")
# SQLite3 Multiple Ciphers' schemes other than its AES-CBC ones (those are written aes-128-cbc, aes-256-cbc)
_MC = re.compile(r"^(chacha20|sqlcipher|ascon128|aegis(?:-(?:128l|128x2|128x4|256|256x2|256x4))?)$")
#: mechanisms whose ciphers have a grammar of their own: (mechanism, pattern); SQLite3 Multiple Ciphers' page ciphers
OWN_CIPHERS: tuple[tuple[str, re.Pattern[str]], ...] = (("sqlite3mc", _MC),)
_SCOPE = re.compile(r"^[a-z][a-z0-9_-]*$")
# pgcrypto's Blowfish and CAST5 (raw and OpenPGP): known, and refused with this reason wherever they are asked for
REFUSED_CIPHERS = ("bf", "cast5", "pgp-bf", "pgp-cast5")
LEGACY_PGCRYPTO_REASON = (
    "pgcrypto's Blowfish and CAST5 need OpenSSL's legacy provider, which OpenSSL 3 does not load by default; "
    "without it, PostgreSQL before 15.19 (16.15, 17.11, 18.6) stores pgp_sym_encrypt(..., 'cipher-algo=bf' or "
    "'cast5') as plaintext (CVE-2026-14663), so a result labelled so would measure no encryption")
LEGACY_PGCRYPTO_FIX = ("use AES (column:aes-256, column:pgp-aes256) or 3DES (column:3des, column:pgp-3des); "
                       "tdebench does not measure Blowfish or CAST5")
REFUSED_SPECS = {
    "sqlite3mc:rc4": ("RC4 is broken: its keystream is biased, so repeated plaintexts leak (RFC 7465 bans it from TLS), "
                      "and SQLite3MC's rc4 scheme has no integrity check",
                      "use sqlite3mc:chacha20, sqlite3mc:aegis, sqlite3mc:ascon128 or sqlite3mc:aes-256-cbc"),
}
GRAMMAR_HINT = (
    "write 'none' or MECHANISM:CIPHER[@SCOPE], e.g. sqlcipher:aes-256-cbc, tde:aes-128-ctr, "
    "column:aes-256, column:pgp-aes256, fs:gocryptfs"
)


@dataclass(frozen=True, order=True)
class EncryptionSpec:
    """One parsed encryption spec; ``str(spec)`` gives its canonical text."""

    mechanism: str = "none"
    cipher: str = ""
    scope: str = ""

    @property
    def is_plain(self) -> bool:
        """True for ``none`` (the baseline twin)."""
        return self.mechanism == "none"

    @property
    def in_server(self) -> bool:
        """True when the database's own threads do the work (its CPU time counts it): every mechanism but an
        encrypted filesystem, whose work the kernel or a FUSE daemon does while the server waits for its reads."""
        return self.mechanism != "fs"

    @property
    def key_bits(self) -> int | None:
        """Key length in bits where the cipher names one (AES-n, PGP AESn, 3DES = 192)."""
        m = _AES.match(self.cipher)
        if m:
            return int(m.group(1))
        m = _PGP.match(self.cipher)
        if m:
            algo = m.group(1)
            return 192 if algo == "3des" else int(algo[3:])
        if self.cipher == "3des":
            return 192
        return None

    @property
    def mode(self) -> str | None:
        """Block-cipher mode where given (``cbc``, ``ctr``, ...)."""
        m = _AES.match(self.cipher)
        return m.group(2) if m else None

    @property
    def label(self) -> str:
        """File-system-safe form, e.g. ``sqlcipher-aes-256-cbc`` or ``tde-aes-256-cbc-tables``."""
        if self.is_plain:
            return "none"
        text = f"{self.mechanism}-{self.cipher}"
        return f"{text}-{self.scope}" if self.scope else text

    def __str__(self) -> str:
        if self.is_plain:
            return "none"
        text = f"{self.mechanism}:{self.cipher}"
        return f"{text}@{self.scope}" if self.scope else text


PLAIN = EncryptionSpec()


def parse_spec(text: str) -> EncryptionSpec:
    """Parse one spec; raises UsageError naming the bad text and the grammar."""
    raw = text.strip().lower()
    if raw in ("none", "plain"):
        return PLAIN
    mechanism, sep, rest = raw.partition(":")
    if not sep or mechanism not in MECHANISMS:
        raise UsageError(
            f"unknown encryption spec '{text}'",
            f"{GRAMMAR_HINT}; mechanisms: none, {', '.join(MECHANISMS)}",
        )
    cipher, _, scope = rest.partition("@")
    refused = REFUSED_SPECS.get(f"{mechanism}:{cipher}")
    if refused:
        raise UsageError(f"tdebench refuses '{text.strip()}': {refused[0]}", refused[1])
    if cipher in REFUSED_CIPHERS:
        raise UsageError(f"tdebench refuses '{text.strip()}': {LEGACY_PGCRYPTO_REASON}", LEGACY_PGCRYPTO_FIX)
    if not (_AES.match(cipher) or _PGP.match(cipher) or _FS.match(cipher) or cipher == "3des"
            or any(own == mechanism and pattern.match(cipher) for own, pattern in OWN_CIPHERS)):
        raise UsageError(f"unknown cipher '{cipher}' in encryption spec '{text}'", GRAMMAR_HINT)
    if "@" in rest and not _SCOPE.match(scope):
        raise UsageError(f"bad scope '{scope}' in encryption spec '{text}'", "a scope is one word, e.g. @tables")
    return EncryptionSpec(mechanism, cipher, scope)


def parse_spec_list(text: str) -> list[EncryptionSpec]:
    """Parse a comma-separated list of specs, rejecting empty items and repeated encrypted specs (``none`` may
    be repeated: ``none,none`` is an A/A test of two identical plain twins)."""
    items = [part for part in (p.strip() for p in text.split(",")) if part]
    if not items:
        raise UsageError("empty --encryption list", "give at least one spec, e.g. none,sqlcipher:aes-256-cbc")
    specs = [parse_spec(item) for item in items]
    check_repeats(specs)
    return specs


def check_repeats(specs: list[EncryptionSpec]) -> None:
    """UsageError for an encrypted spec listed twice (only ``none`` may repeat)."""
    seen: set[EncryptionSpec] = set()
    for spec in specs:
        if spec in seen and not spec.is_plain:
            raise UsageError(f"encryption spec '{spec}' is listed twice",
                             "list each spec once (only none may repeat, e.g. none,none for an A/A test)")
        seen.add(spec)


_ISSUED: set[str] = set()


class SecretKey:
    """Random key bytes from :mod:`secrets`; never printed."""

    __slots__ = ("_bytes",)

    def __init__(self, raw: bytes) -> None:
        self._bytes = raw
        _ISSUED.add(raw.hex())
        _ISSUED.add(raw.hex().upper())

    @classmethod
    def generate(cls, bits: int) -> "SecretKey":
        """A fresh key of ``bits`` bits (a multiple of 8)."""
        if bits <= 0 or bits % 8:
            raise ValueError(f"key length must be a positive multiple of 8 bits, not {bits}")
        return cls(secrets.token_bytes(bits // 8))

    @property
    def bits(self) -> int:
        return len(self._bytes) * 8

    def hex(self) -> str:
        """The key as lower-case hex digits (for passing to the DBMS only)."""
        return self._bytes.hex()

    def raw(self) -> bytes:
        return self._bytes

    def __repr__(self) -> str:
        return f"SecretKey(<{self.bits} bits hidden>)"

    __str__ = __repr__


def generate_password(nbytes: int = 18) -> str:
    """A random URL-safe password, remembered for :func:`redact`."""
    password = secrets.token_urlsafe(nbytes)
    _ISSUED.add(password)
    return password


def issued_secrets() -> frozenset[str]:
    """Every key (hex) and password generated in this process; for redaction and tests."""
    return frozenset(_ISSUED)


def register_secret(text: str) -> None:
    """Have :func:`redact` scrub ``text`` too (e.g. an external server's password read from the environment)."""
    if text:
        _ISSUED.add(text)


def redact(text: str) -> str:
    """Replace every issued secret in ``text`` with ``***``."""
    for secret in _ISSUED:
        if secret and secret in text:
            text = text.replace(secret, "***")
    return text


def write_secret_file(path: Path, content: str | bytes) -> Path:
    """Write a secret to ``path`` with mode 0600 inside a 0700 directory (never world-readable)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    data = content.encode() if isinstance(content, str) else content
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.chmod(path, 0o600)
    return path
