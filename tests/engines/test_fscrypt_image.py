"""The toolkit's ext4 image (toolkit/fscrypt.py) on real loop devices: a canary written through the unlocked
directory is absent from the encrypted image's blocks and present in the plain one's; the key, the mount and the
loop device are gone after destroy, after an error while unlocking, and the files are locked (names and contents
unreadable) once the key is removed."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines.toolkit import fscrypt
from tdebench.engines.toolkit import fscrypt_ioctl as fx
from tdebench.engines.toolkit.exposure import data_chunks
from tdebench.verify.atrest import count_in_file
from tests.fscrypt_keys import assert_no_key_left, fscrypt_keys

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/dev/loop-control").exists(),
                                reason="needs root and loop devices")
SIZE = 256 * fscrypt.MIB


def write_canary(image: fscrypt.Ext4Image) -> bytes:
    canary = f"TDEBENCH-CANARY-{secrets.token_hex(12)}".encode()
    (image.data_dir / "table.db").write_bytes(canary * 512)
    image.sync()
    return canary


@pytest.mark.parametrize("spec, found", [(PLAIN, True), (parse_spec("fs:fscrypt"), False)])
def test_canary_in_image_blocks_only_without_the_policy(tmp_path, spec, found):
    keys = fscrypt_keys()
    image = fscrypt.Ext4Image(spec, tmp_path / "fs", size=SIZE)
    try:
        image.mount()
        status = image.status()
        assert status["enabled"] is (not spec.is_plain)
        canary = write_canary(image)
        assert (count_in_file(image.image, [canary])[canary.decode()] > 0) is found
        assert image.image.stat().st_size == SIZE and image.image_bytes() < SIZE  # sparse
        if not spec.is_plain:
            assert (status["policy_version"], status["contents_mode"]) == (2, fx.MODE_AES_256_XTS)
            assert fscrypt_keys() - keys  # the kernel lists the key while the image is unlocked
    finally:
        image.destroy()
    assert not image.mounted() and not (tmp_path / "fs").exists()
    assert not fscrypt.loop_devices([str(tmp_path)])
    assert_no_key_left(tmp_path, keys)


def test_removing_the_key_locks_the_files_and_remount_unlocks_them(tmp_path):
    image = fscrypt.Ext4Image(parse_spec("fs:fscrypt"), tmp_path / "fs", size=SIZE)
    try:
        image.mount()
        write_canary(image)
        identifier = fx.get_policy(image.data_dir).identifier
        fx.remove_key(image.mount_point, identifier)
        assert fx.key_status(image.mount_point, identifier) == "absent"
        assert os.listdir(image.data_dir) != ["table.db"]  # names are shown encrypted
        image.unmount()
        assert not fscrypt.loop_devices([str(tmp_path)])
        image.mount()  # the key is still in tdebench's memory: unlocked again
        assert os.listdir(image.data_dir) == ["table.db"]
    finally:
        image.destroy()


def test_error_while_unlocking_leaves_nothing(tmp_path, monkeypatch):
    keys = fscrypt_keys()
    image = fscrypt.Ext4Image(parse_spec("fs:fscrypt"), tmp_path / "fs", size=SIZE)

    def fail(*_args):
        raise OSError(22, "refused by the test")
    monkeypatch.setattr(fx, "set_policy", fail)
    with pytest.raises(OSError, match="refused by the test"):
        image.mount()
    assert not image.mounted() and not fscrypt.loop_devices([str(tmp_path)])
    assert_no_key_left(tmp_path, keys)
    image.destroy()
    assert not (tmp_path / "fs").exists()


def test_data_chunks_skip_holes(tmp_path):
    path = tmp_path / "sparse"
    with open(path, "wb") as handle:
        handle.truncate(64 << 20)
        handle.seek(40 << 20)
        handle.write(b"x" * 8192)
    with open(path, "rb") as handle:
        chunks = list(data_chunks(handle.fileno(), 64 << 20, 1 << 20))
    assert sum(end - start for start, end in chunks) < 2 << 20
    assert any(start <= 40 << 20 < end for start, end in chunks)


@pytest.mark.parametrize("spec", [PLAIN, parse_spec("fs:fscrypt")])
def test_block_io_counters_follow_the_image_across_remounts(tmp_path, spec):
    """image_bytes_* are the loop device's sectors × 512, cumulative over a remount (a fresh loop device); on the
    fscrypt image they stand in for the engine's zero bytes_decrypted/encrypted as the labelled estimates."""
    image = fscrypt.Ext4Image(spec, tmp_path / "fs", size=SIZE)
    payload = secrets.token_bytes(8 * fscrypt.MIB)
    try:
        image.mount()
        start = fscrypt.image_counters(image, {"bytes_decrypted": 0, "bytes_encrypted": 0})
        (image.data_dir / "table.db").write_bytes(payload)
        image.sync()
        written = fscrypt.image_counters(image, {})
        assert written["image_bytes_written"] - start["image_bytes_written"] >= len(payload)
        image.unmount()
        image.mount()  # a fresh loop device: its counters start at 0, the image's do not
        assert (image.data_dir / "table.db").read_bytes() == payload  # read from the image: the cache was dropped
        after = fscrypt.image_counters(image, {"bytes_decrypted": 0, "bytes_encrypted": 0})
        assert after["image_bytes_written"] >= written["image_bytes_written"]
        assert after["image_bytes_read"] - written["image_bytes_read"] >= len(payload)
        if spec.is_plain:
            assert after["bytes_decrypted"] == 0 and "bytes_decrypted_estimate" not in after
        else:
            assert "bytes_decrypted" not in after and "bytes_encrypted" not in after
            assert after["bytes_decrypted_estimate"] == after["image_bytes_read"]
            assert after["bytes_encrypted_estimate"] == after["image_bytes_written"]
    finally:
        image.destroy()
    assert fscrypt.image_counters(image, {}) == {}  # no loop device: nothing to read
