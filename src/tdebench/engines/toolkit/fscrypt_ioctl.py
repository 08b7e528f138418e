"""The kernel's fscrypt ioctls (linux/fscrypt.h), called with :func:`fcntl.ioctl`: no ``fscrypt`` tool state
(/etc/fscrypt.conf, .fscrypt metadata directories) and no PAM.

Only v2 policies: the master key is added to the filesystem's own keyring (``FS_IOC_ADD_ENCRYPTION_KEY``), the
kernel derives a key per file from it with HKDF-SHA512, and removing the key (``FS_IOC_REMOVE_ENCRYPTION_KEY``)
or unmounting the filesystem locks every file again. A raw master key must be at least as long as the contents
mode's key: 64 bytes for AES-256-XTS.
"""

from __future__ import annotations

import fcntl
import os
import struct
from dataclasses import dataclass
from pathlib import Path

POLICY_V2 = 2
KEY_IDENTIFIER_SIZE = 16
KEY_SPEC_TYPE_IDENTIFIER = 2
# encryption modes (FSCRYPT_MODE_*)
MODE_AES_256_XTS = 1
MODE_AES_256_CTS = 4
MODE_ADIANTUM = 9
POLICY_FLAGS_PAD_32 = 0x03
POLICY_FLAG_DIRECT_KEY = 0x04
MASTER_KEY_BYTES = 64
# FS_IOC_GET_ENCRYPTION_KEY_STATUS answers
KEY_STATUS = {1: "absent", 2: "present", 3: "incompletely removed"}
REMOVAL_FILES_BUSY = 0x01


def _ioc(direction: int, number: int, size: int) -> int:
    """Linux's _IOC('f', number, size): read = 2, write = 1, read/write = 3."""
    return (direction << 30) | (size << 16) | (ord("f") << 8) | number


# struct fscrypt_key_specifier: __u32 type, __u32 reserved, __u8 u[32]
_KEY_SPEC = struct.Struct("=II32s")
# struct fscrypt_add_key_arg: key_spec, __u32 raw_size, __u32 key_id, __u32 reserved[8], then raw[]
_ADD_KEY = struct.Struct("=II32sII32s")
# struct fscrypt_remove_key_arg: key_spec, __u32 removal_status_flags, __u32 reserved[5]
_REMOVE_KEY = struct.Struct("=II32sI20s")
# struct fscrypt_get_key_status_arg: key_spec, __u32 reserved[6], status, status_flags, user_count, reserved[13]
_KEY_STATUS = struct.Struct("=II32s24sIII52s")
# struct fscrypt_policy_v2: version, contents mode, filenames mode, flags, log2_data_unit_size, reserved[3],
# master_key_identifier[16]
_POLICY_V2 = struct.Struct("=BBBBB3s16s")
_POLICY_V1_SIZE = 12  # FS_IOC_SET_ENCRYPTION_POLICY's number is defined with the v1 struct, whatever is passed

FS_IOC_SET_ENCRYPTION_POLICY = _ioc(2, 19, _POLICY_V1_SIZE)
FS_IOC_GET_ENCRYPTION_POLICY_EX = _ioc(3, 22, 9)
FS_IOC_ADD_ENCRYPTION_KEY = _ioc(3, 23, _ADD_KEY.size)
FS_IOC_REMOVE_ENCRYPTION_KEY = _ioc(3, 24, _REMOVE_KEY.size)
FS_IOC_GET_ENCRYPTION_KEY_STATUS = _ioc(3, 26, _KEY_STATUS.size)


@dataclass(frozen=True)
class Policy:
    """A v2 policy: contents and file-name modes, flags, the master key's identifier."""

    contents: int
    filenames: int
    flags: int
    identifier: bytes

    def pack(self) -> bytes:
        return _POLICY_V2.pack(POLICY_V2, self.contents, self.filenames, self.flags, 0, b"", self.identifier)

    @classmethod
    def unpack(cls, raw: bytes) -> "Policy":
        version, contents, filenames, flags, _, _, identifier = _POLICY_V2.unpack(raw[:_POLICY_V2.size])
        if version != POLICY_V2:
            raise ValueError(f"not a v2 policy (version {version})")
        return cls(contents, filenames, flags, identifier)


def _open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def add_key(mount_point: Path, raw: bytes) -> bytes:
    """Add a raw master key to the filesystem mounted at ``mount_point``; its 16-byte identifier.

    The argument buffer (holding the key) is overwritten with zeros after the call."""
    if len(raw) < MASTER_KEY_BYTES:
        raise ValueError(f"an fscrypt master key needs {MASTER_KEY_BYTES} bytes for AES-256-XTS, got {len(raw)}")
    arg = bytearray(_ADD_KEY.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, b"", len(raw), 0, b"") + raw)
    fd = _open_dir(mount_point)
    try:
        fcntl.ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, arg, True)
        identifier = bytes(arg[8:8 + KEY_IDENTIFIER_SIZE])
    finally:
        os.close(fd)
        arg[:] = bytes(len(arg))
    return identifier


def remove_key(mount_point: Path, identifier: bytes) -> int:
    """Remove the key (the kernel evicts the unlocked files' keys and cached pages); the removal status flags
    (``REMOVAL_FILES_BUSY``: files still open stay readable until closed)."""
    arg = bytearray(_REMOVE_KEY.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, identifier, 0, b""))
    fd = _open_dir(mount_point)
    try:
        fcntl.ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY, arg, True)
    finally:
        os.close(fd)
    return _REMOVE_KEY.unpack(bytes(arg))[3]


def key_status(mount_point: Path, identifier: bytes) -> str:
    """``absent``, ``present`` or ``incompletely removed``."""
    arg = bytearray(_KEY_STATUS.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, identifier, b"", 0, 0, 0, b""))
    fd = _open_dir(mount_point)
    try:
        fcntl.ioctl(fd, FS_IOC_GET_ENCRYPTION_KEY_STATUS, arg, True)
    finally:
        os.close(fd)
    return KEY_STATUS.get(_KEY_STATUS.unpack(bytes(arg))[4], "unknown")


def set_policy(directory: Path, policy: Policy) -> None:
    """Set a v2 policy on an empty directory: everything created below it is encrypted."""
    fd = _open_dir(directory)
    try:
        fcntl.ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, policy.pack())
    finally:
        os.close(fd)


def get_policy(path: Path) -> Policy | None:
    """The policy of ``path`` (a file or directory), None when it has none."""
    arg = bytearray(struct.pack("=Q", _POLICY_V2.size) + bytes(_POLICY_V2.size))
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_GET_ENCRYPTION_POLICY_EX, arg, True)
    except OSError as exc:
        if exc.errno == 61:  # ENODATA: not encrypted
            return None
        raise
    finally:
        os.close(fd)
    return Policy.unpack(bytes(arg[8:]))
