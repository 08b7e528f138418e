"""The kernel's fscrypt keys, for tests that check a run or an image leaves none behind."""

from __future__ import annotations

from pathlib import Path


def fscrypt_keys() -> set[str]:
    """The fscrypt key claims the kernel lists (one per key added to a mounted filesystem's keyring)."""
    return {line.split()[-1] for line in Path("/proc/keys").read_text().splitlines() if " .fscrypt " in line}


def other_loop_mounts(base: Path) -> list[str]:
    """ext4 filesystems on loop devices mounted outside ``base`` (another test's images)."""
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if line.startswith("/dev/loop") and line.split()[2] == "ext4" and not line.split()[1].startswith(str(base))]


def assert_no_key_left(base: Path, keys_before: set[str]) -> None:
    """No fscrypt key added since ``keys_before`` is still listed, unless another test's image may hold it.

    /proc/keys is global: while another test (on another worker) holds an fscrypt image mounted, its keys are listed
    too. Ours live in our images' filesystem keyrings, which unmounting drops; so an extra key counts against us only
    when no other image was mounted just before or just after the keys were read."""
    others_before = other_loop_mounts(base)
    extra = fscrypt_keys() - keys_before
    if extra and not others_before and not other_loop_mounts(base):
        raise AssertionError(f"fscrypt keys left behind: {sorted(extra)}")
