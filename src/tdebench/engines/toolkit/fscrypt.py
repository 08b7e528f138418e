"""Kernel filesystem encryption with ext4's fscrypt on a loop-mounted image, usable by any engine that keeps files.

Specs: ``fs:fscrypt`` (contents AES-256-XTS, file names AES-256-CTS, policy v2) and ``fs:fscrypt-adiantum``
(Adiantum, where the kernel has it). A :class:`Ext4Image` owns, under its root::

    image/ext4.img   a sparse ext4 image (mkfs.ext4 -O encrypt): what is really on disk; at-rest scans read it
    mnt/             where the image is loop-mounted while the instance runs
    mnt/data/        the engine's directory: with an encryption policy for fs:fscrypt, without one otherwise

The plain twin of an ``fs:fscrypt`` comparison lives on an identical image (same mkfs options, ``encrypt``
feature included) without the policy, so that the filesystem is not the difference: engines give every twin
``storage=ext4-loop`` when the plan holds an fscrypt spec (:func:`plan_settings`).

The master key is 64 bytes from :mod:`secrets`, kept in this process's memory only and handed to the kernel with
``FS_IOC_ADD_ENCRYPTION_KEY`` (:mod:`tdebench.engines.toolkit.fscrypt_ioctl`); it is never written to a file. With a
key server (:mod:`tdebench.api.keys`) the key is fetched from it at every mount instead, and added to the filesystem
from what it returns. Unmounting removes the key first (``FS_IOC_REMOVE_ENCRYPTION_KEY``), then the filesystem
(which takes its keyring with it); ``mount -o loop`` sets the loop device to clear itself on unmount, and any loop
device still backed by the image is detached. The image is sparse and as large as the free space of the filesystem
it lives on (at most :data:`MAX_IMAGE`): it fills up no sooner than a plain directory would, and takes on disk only
what is written (the disk guard counts :data:`EXT4_OVERHEAD` on top of the engine's footprint).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

from tdebench.api.keys import BY_TDEBENCH, KeyAccess, KeyNeed, KeyPath
from tdebench.engines.toolkit.keyrows import server_key_row, unattended
from tdebench.encryption import EncryptionSpec, parse_spec
from tdebench.engines.toolkit import fscrypt_ioctl as fx
from tdebench.engines.toolkit.fsencrypt import mount_entry
from tdebench.engines.toolkit.process import own_path
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.lifeline import helper_preexec

#: spec cipher -> (contents mode, file-name mode, flags, what the report calls it)
VARIANTS: dict[str, tuple[int, int, int, str]] = {
    "fscrypt": (fx.MODE_AES_256_XTS, fx.MODE_AES_256_CTS, fx.POLICY_FLAGS_PAD_32,
                "AES-256-XTS contents, AES-256-CTS file names"),
    "fscrypt-adiantum": (fx.MODE_ADIANTUM, fx.MODE_ADIANTUM, fx.POLICY_FLAGS_PAD_32 | fx.POLICY_FLAG_DIRECT_KEY,
                         "Adiantum (XChaCha12 + AES-256) contents and file names"),
}
STORAGE_KEY = "storage"
LOOP_STORAGE = "ext4-loop"
STORAGE_CHOICES = ("dir", LOOP_STORAGE)
MKFS_OPTIONS = ("-O", "encrypt", "-m", "0", "-i", "262144", "-J", "size=64", "-E",
                "lazy_itable_init=0,lazy_journal_init=0")
MIB = 1 << 20
MIN_IMAGE = 512 * MIB
MAX_IMAGE = 1 << 40
EXT4_OVERHEAD = 160 * MIB  # journal, inode tables and bitmaps that mkfs writes
PACKAGES = "e2fsprogs mount"
LOOP_CONTROL = Path("/dev/loop-control")
EXT4_ENCRYPTION = Path("/sys/fs/ext4/features/encryption")


def fs_specs() -> list[EncryptionSpec]:
    """Every fscrypt spec (for an engine's ``supported_specs``)."""
    return [parse_spec(f"fs:{name}") for name in VARIANTS]


def is_fscrypt_spec(spec: EncryptionSpec) -> bool:
    return spec.mechanism == "fs" and spec.cipher in VARIANTS


def plan_settings(specs: list[EncryptionSpec]) -> dict[str, str]:
    """``storage=ext4-loop`` for every twin when one of ``specs`` is fscrypt, so the plain twin runs on ext4 too."""
    return {STORAGE_KEY: LOOP_STORAGE} if any(is_fscrypt_spec(s) for s in specs) else {}


def on_loop_image(spec: EncryptionSpec, settings: dict[str, str]) -> bool:
    """True when an instance of ``spec`` with these settings lives on an ext4 image."""
    return is_fscrypt_spec(spec) or settings.get(STORAGE_KEY, "dir").lower() == LOOP_STORAGE


def validate_storage(settings: dict[str, str]) -> None:
    value = settings.get(STORAGE_KEY)
    if value is not None and value.lower() not in STORAGE_CHOICES:
        raise UsageError(f"bad value '{value}' for the setting {STORAGE_KEY}",
                         f"use one of: {', '.join(STORAGE_CHOICES)}")


def with_image_status(status: dict[str, Any], image: "Ext4Image | None", spec: EncryptionSpec,
                      path: Path) -> dict[str, Any]:
    """An engine's encryption ``status`` with the image's ``filesystem`` facts; for an fscrypt ``spec``,
    ``enabled`` says whether ``path`` (the database's file or directory) is in the unlocked encrypted directory."""
    if image is not None:
        fs = image.status()
        status["filesystem"] = fs
        if is_fscrypt_spec(spec):
            status["enabled"] = bool(fs["enabled"] and path.is_relative_to(image.data_dir))
    return status


def key_path(spec: EncryptionSpec) -> KeyPath | None:
    """An fscrypt spec's path to a key server: its master key, fetched by tdebench at every mount."""
    if not is_fscrypt_spec(spec):
        return None
    return KeyPath((KeyNeed(1, fx.MASTER_KEY_BYTES * 8, "fscrypt master key (policy v2)"),), BY_TDEBENCH,
                   "tdebench fetches the master key at every mount of the image and adds what the key server returns "
                   "to the filesystem's keyring (FS_IOC_ADD_ENCRYPTION_KEY)")


def fscrypt_key_row(access: KeyAccess | None = None) -> dict[str, Any]:
    """The threat model's key-storage entry of an fscrypt config (``access``: its key server)."""
    what = "fscrypt master key (64 bytes, policy v2)"
    running = "the kernel's keyring of the mounted filesystem (its files read in clear through the mount)"
    if access is not None:
        return server_key_row(access, what, "fetched by tdebench at every mount and added to the filesystem's "
                              "keyring", running + "; the token in tdebench's memory", [])
    return {"key": what, "source": "file",
            "where": "memory of the tdebench process, and the mounted filesystem's keyring in the kernel while "
                     "unlocked (removed before unmount)", "on_disk": False, "beside_data": False, "mode": None,
            "protected_by": "not stored", "found_in_clear": [],
            "unattended": unattended("the master key (a raw key file for fscrypt's protector, or a passphrase "
                                     "in a file)", "tdebench keeps it in its memory only"),
            "running": {"where": running}}


def check_available(spec: EncryptionSpec | None = None) -> None:
    """EnvironmentProblem (exit 3) when loop-mounted ext4 images (and the spec's cipher) cannot be had here."""
    if os.geteuid() != 0:
        raise EnvironmentProblem("fs:fscrypt and storage=ext4-loop need root (losetup, mount and the fscrypt "
                                 "ioctls)", "run tdebench as root, or leave fs:fscrypt out")
    if not LOOP_CONTROL.exists():
        raise EnvironmentProblem(f"{LOOP_CONTROL} does not exist, so no loop device can hold an ext4 image",
                                 "load the loop module (modprobe loop); in a container give it the loop devices "
                                 "(--privileged or --device /dev/loop-control)")
    for tool in ("mkfs.ext4", "mount", "umount", "losetup"):
        if shutil.which(tool) is None and not any(Path(d, tool).exists() for d in ("/usr/sbin", "/sbin")):
            raise EnvironmentProblem(f"{tool} is not installed", f"install the Debian packages {PACKAGES}")
    if not EXT4_ENCRYPTION.exists():
        raise EnvironmentProblem("this kernel's ext4 has no encryption (CONFIG_FS_ENCRYPTION)",
                                 "use a kernel built with CONFIG_FS_ENCRYPTION=y, or leave fs:fscrypt out")
    if spec is not None and spec.cipher == "fscrypt-adiantum":
        problem = adiantum_problem()
        if problem:
            raise EnvironmentProblem(f"this kernel cannot encrypt with Adiantum ({problem})",
                                     "use fs:fscrypt (AES-256-XTS), or a kernel with CONFIG_CRYPTO_ADIANTUM")


@cache
def adiantum_problem() -> str:
    """"" when a file can be written under an Adiantum policy on a scratch image, else why not (tried once)."""
    root = own_path(Path(tempfile.mkdtemp(prefix="tdebench-fscrypt-probe-")))  # for `tdebench cleanup`
    image = Ext4Image(parse_spec("fs:fscrypt-adiantum"), root, size=256 * MIB)
    try:
        image.mount()
        (image.data_dir / "probe").write_bytes(b"x")
        return ""
    except OSError as exc:
        return f"a file under an Adiantum policy could not be written: {exc.strerror or exc}"
    finally:
        image.destroy()


def _run(argv: list[str], what: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, timeout=300,
                            preexec_fn=helper_preexec())
    if result.returncode != 0:
        raise EnvironmentProblem(f"{what} failed (code {result.returncode}): {result.stderr.strip()[-300:]}",
                                 "check that loop devices are free (losetup -a) and the disk has room")


def loop_devices(backing_under: list[str]) -> list[tuple[str, str]]:
    """(device, backing file) of every loop device whose backing file lies in one of ``backing_under``."""
    out = []
    for entry in sorted(Path("/sys/block").glob("loop*")):
        try:
            backing = (entry / "loop" / "backing_file").read_text().strip()
        except OSError:
            continue
        backing = backing.removesuffix(" (deleted)")
        if any(backing == d or backing.startswith(d.rstrip("/") + "/") for d in backing_under):
            out.append((f"/dev/{entry.name}", backing))
    return out


def loop_sectors(device: str) -> tuple[int, int] | None:
    """(sectors read, sectors written) of a loop device from ``/sys/block/loopN/stat`` (512-byte units, whatever
    the device's block size), or None when it is gone."""
    try:
        fields = Path("/sys/block", Path(device).name, "stat").read_text().split()
        return int(fields[2]), int(fields[6])
    except (OSError, IndexError, ValueError):
        return None


def image_counters(image: "Ext4Image | None", out: dict[str, float]) -> dict[str, float]:
    """``out`` (an engine's counters) with the block I/O of its ext4 image: ``image_bytes_read`` and
    ``image_bytes_written`` on every image twin. On an fscrypt twin the engine encrypts nothing itself, so its own
    ``bytes_decrypted``/``bytes_encrypted`` (zero) give way to ``bytes_decrypted_estimate`` /
    ``bytes_encrypted_estimate``: the same block I/O, which is the ciphertext the kernel decrypted on reading and
    encrypted on writing back, plus the ext4 metadata and journal blocks it did not (its plain twin's
    ``image_bytes_*`` show how much that is). No exact count exists: fscrypt keeps none."""
    if image is None:
        return out
    io = image.block_io()
    if io is None:
        return out
    read, written = io
    out.update(image_bytes_read=read, image_bytes_written=written)
    if image.encrypted:
        out.pop("bytes_decrypted", None)
        out.pop("bytes_encrypted", None)
        out.update(bytes_decrypted_estimate=read, bytes_encrypted_estimate=written)
    return out


def detach(device: str) -> bool:
    """``losetup -d``; True once the device no longer has a backing file."""
    subprocess.run(["losetup", "-d", device], capture_output=True, check=False, timeout=30)
    return not Path("/sys/block", Path(device).name, "loop", "backing_file").exists()


def syncfs(path: Path) -> None:
    """Write the filesystem holding ``path`` to its device (here: the loop device's image file)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), f"syncfs({path}) failed")
    finally:
        os.close(fd)


class Ext4Image:
    """One sparse ext4 image, loop-mounted at ``root/mnt``, with ``mnt/data`` encrypted for fscrypt specs."""

    def __init__(self, spec: EncryptionSpec, root: Path, owner: pwd.struct_passwd | None = None,
                 size: int | None = None, keys: KeyAccess | None = None) -> None:
        self.spec = spec
        self.variant = VARIANTS.get(spec.cipher) if is_fscrypt_spec(spec) else None
        self.root = root
        self.image_dir = root / "image"
        self.image = self.image_dir / "ext4.img"
        self.mount_point = root / "mnt"
        self.data_dir = self.mount_point / "data"
        self.owner = owner
        self._size = size
        self._key: bytes | None = secrets.token_bytes(fx.MASTER_KEY_BYTES) if self.variant else None
        #: the config's key server: the master key is fetched from it at every mount (set before the first mount)
        self.key_access = keys
        self._identifier: bytes | None = None
        # block I/O of loop devices this image was attached to before (a remount gets a fresh device)
        self._io_carry = (0, 0)
        self._io_last: tuple[str, int, int] | None = None
        self.want_direct_io = False  # asked for by use_direct_io (a memory ratio)
        self.direct_io = False  # the loop device reads and writes the image file with O_DIRECT

    @property
    def encrypted(self) -> bool:
        return self.variant is not None

    # lifecycle ------------------------------------------------------------------------------
    def mount(self) -> None:
        """Create the image (first call), mount it, unlock (fscrypt) and set the policy on ``data/``; idempotent."""
        if self.mounted():
            return
        check_available()
        if not self.image.exists():
            self._create()
        self.mount_point.mkdir(mode=0o755, exist_ok=True)
        _run(["mount", "-t", "ext4", "-o", "loop,noatime", str(self.image), str(self.mount_point)],
             f"mounting {self.image}")
        try:
            if self.want_direct_io:
                self.direct_io = self._loop_direct_io()
            self._unlock()
        except BaseException:
            self.unmount()
            raise

    def use_direct_io(self) -> None:
        """From now on (and on every later mount) the loop device reads and writes the image file with direct I/O,
        so that the host's page cache does not keep a second copy of the image: a read the engine's and the
        image's own caches miss reaches the disk, as on a real device. A memory ratio asks for it (with buffered
        loop I/O every twin on an image read its "disk" from memory); elsewhere the loop stays buffered, which
        keeps loads and shutdowns fast. Where the backing filesystem refuses, ``direct_io`` (in the status facts)
        stays False. Asked again while mounted with direct I/O on (every cache resize), nothing is done."""
        if self.mounted() and not (self.want_direct_io and self.direct_io):
            self.direct_io = self._loop_direct_io()
        self.want_direct_io = True

    def _loop_direct_io(self) -> bool:
        """Switch the image's loop device to direct I/O on its backing file (True once the kernel says so)."""
        for device, _ in loop_devices([str(self.image_dir)]):
            subprocess.run(["losetup", "--direct-io=on", device], capture_output=True, check=False, timeout=30)
            try:
                return Path("/sys/block", Path(device).name, "loop", "dio").read_text().strip() == "1"
            except OSError:
                return False
        return False

    def _create(self) -> None:
        self.image_dir.mkdir(parents=True, mode=0o700, exist_ok=True)
        size = self._size or self._default_size()
        with open(self.image, "wb") as handle:
            handle.truncate(size)
        os.chmod(self.image, 0o600)
        _run(["mkfs.ext4", "-q", "-F", *MKFS_OPTIONS, "-L", "tdebench", str(self.image)], "mkfs.ext4")

    def _default_size(self) -> int:
        free = shutil.disk_usage(self.image_dir).free
        return max(MIN_IMAGE, min(MAX_IMAGE, free // MIB * MIB))

    def _unlock(self) -> None:
        """Add the key to the filesystem (fscrypt) and, on first mount, make ``data/`` with its policy."""
        if self._key is not None:
            key = self.key_access.fetch(1).raw() if self.key_access is not None else self._key
            self._identifier = fx.add_key(self.mount_point, key)
        if not self.data_dir.exists():
            self.data_dir.mkdir(mode=0o700)
            if self.variant is not None and self._identifier is not None:
                contents, names, flags, _ = self.variant
                fx.set_policy(self.data_dir, fx.Policy(contents, names, flags, self._identifier))
            if self.owner is not None:
                os.chown(self.data_dir, self.owner.pw_uid, self.owner.pw_gid)

    def unmount(self) -> None:
        """Lock (remove the key), unmount (retried while busy, lazily at last) and detach the loop device."""
        if self.mounted():
            if self._identifier is not None:
                try:
                    fx.remove_key(self.mount_point, self._identifier)
                except OSError:
                    pass  # unmounting drops the filesystem's keyring all the same
            for _ in range(20):
                if subprocess.run(["umount", str(self.mount_point)], capture_output=True, check=False).returncode == 0:
                    break
                time.sleep(0.25)
            else:
                subprocess.run(["umount", "-l", str(self.mount_point)], capture_output=True, check=False)
        self._identifier = None
        for device, _ in loop_devices([str(self.image_dir)]):
            detach(device)
        if self.mounted():
            raise EnvironmentProblem(f"could not unmount {self.mount_point}",
                                     f"stop what still uses it (fuser -vm {self.mount_point}) and run "
                                     f"umount {self.mount_point}")

    def destroy(self, keep: bool = False) -> None:
        """Unmount and, unless ``keep``, delete the root (image and mount point)."""
        try:
            self.unmount()
        finally:
            if not keep and not self.mounted():
                shutil.rmtree(self.root, ignore_errors=True)

    # facts ----------------------------------------------------------------------------------
    def mounted(self) -> bool:
        entry = mount_entry(self.mount_point)
        return entry is not None and entry["fstype"] == "ext4"

    def sync(self) -> None:
        """Push what the engine wrote through the mount into the image file (before an at-rest scan)."""
        if self.mounted():
            syncfs(self.mount_point)

    def block_io(self) -> tuple[int, int] | None:
        """Bytes read from and written to the image through its loop device, cumulative over every mount of this
        image (None while it has no loop device)."""
        devices = loop_devices([str(self.image_dir)])
        sectors = loop_sectors(devices[0][0]) if devices else None
        if sectors is None:
            return None
        device, (r, w) = devices[0][0], sectors
        last = self._io_last
        if last is not None and (last[0] != device or r < last[1] or w < last[2]):  # a new attachment
            self._io_carry = (self._io_carry[0] + last[1], self._io_carry[1] + last[2])
        self._io_last = (device, r, w)
        return (self._io_carry[0] + r) * 512, (self._io_carry[1] + w) * 512

    def image_bytes(self) -> int:
        """Bytes the sparse image really occupies."""
        try:
            return self.image.stat().st_blocks * 512
        except OSError:
            return 0

    def status(self) -> dict[str, Any]:
        """Mount-table facts, the policy of ``data/`` and the key's status; ``enabled`` only when the policy
        is there and its key is present."""
        entry = mount_entry(self.mount_point)
        policy = fx.get_policy(self.data_dir) if entry and self.data_dir.exists() else None
        key = (fx.key_status(self.mount_point, policy.identifier) if policy is not None else None)
        out: dict[str, Any] = {
            "enabled": bool(policy is not None and key == "present"),
            "mechanism": "fscrypt (ext4 native encryption, kernel)" if self.encrypted else "none (plain ext4 image)",
            "spec": str(self.spec), "image": str(self.image), "image_bytes": self.image_bytes(),
            "mount_point": str(self.mount_point), "mount": entry, "directory": str(self.data_dir),
            "policy_version": 2 if policy is not None else None, "key_status": key,
            "loop_direct_io": self.direct_io,
            "covers": "every file of the engine's directory (contents and names); not the ext4 metadata "
                      "(sizes, times, layout)" if self.encrypted else "nothing",
        }
        if policy is not None:
            out.update(contents_mode=policy.contents, filenames_mode=policy.filenames, policy_flags=policy.flags,
                       ciphers=self.variant[3] if self.variant else None)
        return out

    def facts(self) -> dict[str, Any]:
        """Settings-style facts for the report (no key material)."""
        return {"storage": LOOP_STORAGE, "filesystem": "sparse ext4 image, loop-mounted",
                "mkfs": "mkfs.ext4 " + " ".join(MKFS_OPTIONS),
                "mount_options": "loop,noatime",
                "fscrypt": (f"policy v2, {self.variant[3]}, 64-byte master key from secrets in memory only"
                            if self.variant else "no policy (the plain twin)")}
