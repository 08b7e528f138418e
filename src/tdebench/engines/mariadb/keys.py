"""Key material for MariaDB's ``file_key_management`` plugin, with no plaintext key on disk.

The plugin reads a key file of ``id;hex`` lines (key 1: system and table data, key 2: temporary
data). The hex length picks the AES key size: 32 / 48 / 64 digits = AES-128 / 192 / 256; any other
length stops the server ("Invalid key").

We never write that file in clear. It is encrypted the way ``openssl enc -aes-256-cbc -md sha1``
does and the plugin expects (plugin/file_key_management/parser.cc): ``Salted__`` + an 8-byte salt
+ AES-256-CBC/PKCS#7 ciphertext, key and IV from OpenSSL's ``EVP_BytesToKey`` with SHA-1 and one
iteration over (file key, salt). The file key is a random 256-bit secret that the server reads via
``file_key_management_filekey=FILE:<path>`` only while it starts; the engine writes it into a
0700 directory on tmpfs (``/dev/shm``) just before start-up and deletes it as soon as the server
is ready, so it never reaches a disk. Everything is done in Python (``cryptography``): no key or
pass phrase ever appears on a command line.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from tdebench.encryption import SecretKey, generate_password, write_secret_file
from tdebench.engines.toolkit.process import own_path

OPENSSL_MAGIC = b"Salted__"
KEY_IDS = (1, 2, 3)  # 1 = system/table data (innodb_default_encryption_key_id), 2 = temporary data, 3 = re-keying


def _bytes_to_key(passphrase: bytes, salt: bytes) -> tuple[bytes, bytes]:
    """OpenSSL ``EVP_BytesToKey(aes-256-cbc, sha1, salt, pass, count=1)``: 32-byte key, 16-byte IV."""
    out, digest = b"", b""
    while len(out) < 48:
        digest = hashlib.sha1(digest + passphrase + salt).digest()
        out += digest
    return out[:32], out[32:48]


def openssl_encrypt(plaintext: bytes, passphrase: str) -> bytes:
    """``openssl enc -aes-256-cbc -md sha1 -pass pass:<passphrase>`` output for ``plaintext``."""
    salt = secrets.token_bytes(8)
    key, iv = _bytes_to_key(passphrase.encode(), salt)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return OPENSSL_MAGIC + salt + encryptor.update(padded) + encryptor.finalize()


def openssl_decrypt(blob: bytes, passphrase: str) -> bytes:
    """Inverse of :func:`openssl_encrypt` (tests and diagnostics only)."""
    if not blob.startswith(OPENSSL_MAGIC) or len(blob) < 32:
        raise ValueError("not an OpenSSL 'Salted__' file")
    salt = blob[8:16]
    key, iv = _bytes_to_key(passphrase.encode(), salt)
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(blob[16:]) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(padded) + unpadder.finalize()


def transient_dir(fallback: Path) -> Path:
    """A fresh 0700 directory for secrets needed only during start-up: on tmpfs when possible."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else fallback
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    return own_path(Path(tempfile.mkdtemp(prefix="tdebench-secret-mariadb-", dir=base)))  # for `tdebench cleanup`


@dataclass
class KeyMaterial:
    """Data keys (ids 1 and 2, all of ``bits`` bits) and the random file key that wraps them."""

    bits: int
    keys: dict[int, SecretKey]
    filekey: str

    @classmethod
    def generate(cls, bits: int) -> "KeyMaterial":
        if bits not in (128, 192, 256):
            raise ValueError(f"MariaDB keys are 128, 192 or 256 bits, not {bits}")
        # 43 URL-safe characters = 256 random bits; registered for redaction like every secret
        return cls(bits, {i: SecretKey.generate(bits) for i in KEY_IDS}, generate_password(32))

    def plaintext(self) -> bytes:
        """The key file as the plugin parses it (kept in memory only)."""
        return "".join(f"{i};{k.hex()}\n" for i, k in sorted(self.keys.items())).encode()

    def write_key_file(self, path: Path) -> Path:
        """Write the encrypted key file (0600 in a 0700 directory)."""
        return write_secret_file(path, openssl_encrypt(self.plaintext(), self.filekey))

    def write_filekey(self, directory: Path) -> Path:
        """Write the file key for one server start (0600); the caller deletes it afterwards."""
        return write_secret_file(directory / "filekey", self.filekey)


def remove_tree(path: Path | None) -> None:
    """Delete a transient secrets directory (ignore if already gone)."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
