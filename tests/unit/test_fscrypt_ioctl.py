"""The fscrypt ioctl numbers and structures match linux/fscrypt.h (values printed by a C program compiled against
the kernel's UAPI header: _IOR/_IOWR numbers and sizeof of each struct), and the spec grammar and plan settings
of ``fs:fscrypt``."""

from __future__ import annotations

import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines.toolkit import fscrypt
from tdebench.engines.toolkit import fscrypt_ioctl as fx
from tdebench.errors import UsageError


def test_ioctl_numbers_are_the_kernel_headers():
    assert fx.FS_IOC_SET_ENCRYPTION_POLICY == 0x800C6613  # _IOR('f', 19, struct fscrypt_policy_v1)
    assert fx.FS_IOC_GET_ENCRYPTION_POLICY_EX == 0xC0096616
    assert fx.FS_IOC_ADD_ENCRYPTION_KEY == 0xC0506617
    assert fx.FS_IOC_REMOVE_ENCRYPTION_KEY == 0xC0406618
    assert fx.FS_IOC_GET_ENCRYPTION_KEY_STATUS == 0xC080661A


def test_structure_sizes_are_the_kernel_headers():
    assert fx._POLICY_V2.size == 24 and fx._KEY_SPEC.size == 40
    assert fx._ADD_KEY.size == 80 and fx._REMOVE_KEY.size == 64 and fx._KEY_STATUS.size == 128


def test_policy_round_trip_and_layout():
    ident = bytes(range(16))
    policy = fx.Policy(fx.MODE_AES_256_XTS, fx.MODE_AES_256_CTS, fx.POLICY_FLAGS_PAD_32, ident)
    raw = policy.pack()
    assert raw[:4] == bytes([2, 1, 4, 3]) and raw[4:8] == bytes(4) and raw[8:] == ident
    assert fx.Policy.unpack(raw) == policy
    with pytest.raises(ValueError):
        fx.Policy.unpack(bytes([1]) + raw[1:])


def test_short_master_key_is_refused_before_the_kernel(tmp_path):
    with pytest.raises(ValueError, match="64 bytes"):
        fx.add_key(tmp_path, b"k" * 32)


def test_specs_parse_and_plan_settings():
    specs = [parse_spec("fs:fscrypt"), parse_spec("FS:fscrypt-adiantum")]
    assert [str(s) for s in specs] == ["fs:fscrypt", "fs:fscrypt-adiantum"] == [str(s) for s in fscrypt.fs_specs()]
    assert all(fscrypt.is_fscrypt_spec(s) for s in specs)
    assert not fscrypt.is_fscrypt_spec(parse_spec("fs:gocryptfs"))
    with pytest.raises(UsageError):
        parse_spec("fs:fscrypt-nosuch")
    assert fscrypt.plan_settings([PLAIN, specs[0]]) == {"storage": "ext4-loop"}
    assert fscrypt.plan_settings([PLAIN, parse_spec("sqlcipher:aes-256-cbc")]) == {}
    assert fscrypt.on_loop_image(PLAIN, {"storage": "ext4-loop"}) and not fscrypt.on_loop_image(PLAIN, {})
    with pytest.raises(UsageError, match="storage"):
        fscrypt.validate_storage({"storage": "tmpfs"})
