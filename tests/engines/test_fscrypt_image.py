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

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/dev/loop-control").exists(),
                                reason="needs root and loop devices")
SIZE = 256 * fscrypt.MIB


def fscrypt_keys() -> set[str]:
    return {line.split()[-1] for line in Path("/proc/keys").read_text().splitlines() if " .fscrypt " in line}


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
    assert not fscrypt.loop_devices([str(tmp_path)]) and fscrypt_keys() <= keys


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
    assert not image.mounted() and not fscrypt.loop_devices([str(tmp_path)]) and fscrypt_keys() <= keys
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
