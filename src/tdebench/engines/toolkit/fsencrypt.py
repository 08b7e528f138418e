"""Filesystem-level encryption with gocryptfs (FUSE), usable by any engine that has a data directory.

Specs: ``fs:gocryptfs`` (AES-256-GCM), ``fs:gocryptfs-aessiv`` (AES-SIV-512), ``fs:gocryptfs-xchacha``
(XChaCha20-Poly1305). A :class:`GocryptfsMount` owns two directories under its root:

* ``cipher/`` -- what is really on disk (encrypted file contents and names). At-rest scans and storage
  sizes use this directory.
* ``plain/`` -- the FUSE mount point, the decrypted view. The engine puts its data directory inside.

The password is random (:func:`tdebench.encryption.generate_password`), lives in memory only and reaches gocryptfs
through a 0600 pass file in a private 0700 temporary directory that is deleted as soon as gocryptfs has read it.
With a key server (:mod:`tdebench.api.keys`) gocryptfs fetches it itself at every ``-init`` and mount: ``-extpass``
runs a short Python program (the system's ``python3``, which the servers' OS user can run) that reads the key from
the key server over TLS with the config's token, both handed over in its environment. gocryptfs runs in the
foreground (``-fg``) as a tracked :class:`ServerProcess`, so :func:`tdebench.engines.toolkit.process.stop_all` ends
it on exit, error and Ctrl-C (gocryptfs unmounts itself on SIGTERM).

When the database server runs as another OS user (tdebench as root, servers as ``tdebench``), gocryptfs
is initialised and run *as that user* too, without ``-allow_other``: only the server's user can enter the
mount (root included is refused; tdebench reaches inside through :mod:`tdebench.engines.toolkit.asuser`). Running
gocryptfs as root with ``-allow_other`` makes it switch identities per request, and gocryptfs 2.3 (Debian
12) then fails now and then with EPERM -- e.g. PostgreSQL's ``could not create temporary file
"base/pgsql_tmp/...": Operation not permitted`` in a parallel CREATE INDEX (https://github.com/rfjakob/gocryptfs/issues/892, fixed
in 2.5.1). As the owner it never switches, and the mount is also more private.

Unmount: ``fusermount3 -u``, retried while the mount is busy, lazy ``-u -z`` as the last resort.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tdebench.api.keys import BY_HELPER, KeyAccess, KeyNeed, KeyPath
from tdebench.engines.toolkit.keyrows import server_key_row, unattended
from tdebench.encryption import EncryptionSpec, generate_password, parse_spec, redact, write_secret_file
from tdebench.engines.toolkit.exposure import files_holding, mode_text, same_disk
from tdebench.engines.toolkit.process import ServerProcess, find_binary, own_path, service_user, tail
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.lifeline import helper_preexec

# spec cipher -> (what gocryptfs uses, extra -init flags)
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "gocryptfs": ("AES-256-GCM", ()),
    "gocryptfs-aessiv": ("AES-SIV-512", ("-aessiv",)),
    "gocryptfs-xchacha": ("XChaCha20-Poly1305", ("-xchacha",)),
}
PACKAGES = "gocryptfs fuse3"
_SEARCH = (Path("/usr/bin"), Path("/bin"), Path("/usr/local/bin"))
# -extpass: a program that prints the key server's key (gocryptfs parses the option as comma-separated values and
# splits a single one on spaces, so the command has neither commas, quotes nor spaces; the program comes in the
# environment)
_FETCH = ("import json,os,ssl,sys,urllib.request as u\n"
          "c=ssl.create_default_context(cafile=os.environ.get('TDEBENCH_KEY_CA') or None)\n"
          "r=u.Request(os.environ['TDEBENCH_KEY_URL'],headers={'X-Vault-Token':os.environ['VAULT_TOKEN']})\n"
          "sys.stdout.write(json.load(u.urlopen(r,context=c,timeout=15))['data']['data']['data'])\n")
_EXTPASS = "-c exec(__import__('os').environ['TDEBENCH_FETCH'])"
_CALLER_VAULT = ("VAULT_TOKEN", "VAULT_ADDR", "VAULT_CACERT", "BAO_TOKEN", "BAO_ADDR", "BAO_CACERT")


def fs_specs() -> list[EncryptionSpec]:
    """Every filesystem-encryption spec (for an engine's ``supported_specs``)."""
    return [parse_spec(f"fs:{name}") for name in VARIANTS]


def key_path(spec: EncryptionSpec) -> KeyPath | None:
    """A gocryptfs spec's path to a key server: its password, fetched by gocryptfs' ``-extpass`` helper."""
    if not is_fs_spec(spec):
        return None
    return KeyPath((KeyNeed(1, 256, "gocryptfs password (unwraps the master key in gocryptfs.conf)"),), BY_HELPER,
                   "gocryptfs runs a helper (-extpass) that fetches the password from the key server at every mount, "
                   "with the token in its environment")


def is_fs_spec(spec: EncryptionSpec) -> bool:
    """A gocryptfs spec (``fs:fscrypt`` is the kernel's: :mod:`tdebench.engines.toolkit.fscrypt`)."""
    return spec.mechanism == "fs" and spec.cipher in VARIANTS


def check_available() -> tuple[Path, Path]:
    """(gocryptfs, fusermount3) paths; EnvironmentProblem naming the Debian packages if anything is missing."""
    fuse = Path("/dev/fuse")
    try:
        mode = fuse.stat().st_mode
    except OSError:
        raise EnvironmentProblem(
            "/dev/fuse does not exist, so gocryptfs cannot mount",
            f"install the Debian packages {PACKAGES} and load the fuse module (modprobe fuse); in a container "
            "start it with --device /dev/fuse --cap-add SYS_ADMIN") from None
    if not stat.S_ISCHR(mode) or not os.access(fuse, os.R_OK | os.W_OK):
        raise EnvironmentProblem("/dev/fuse is not a usable character device for this user",
                                 "run as root or give this user read/write access to /dev/fuse")
    user = service_user()
    if user is not None and not _user_can_open(fuse, user):
        # gocryptfs runs as the server's user; fusermount3's set-uid bit does not help where the sandbox
        # ignores it (seen here: "fusermount3: failed to open /dev/fuse: Permission denied")
        raise EnvironmentProblem(
            f"/dev/fuse (mode {stat.S_IMODE(mode):o}) cannot be opened by the OS user '{user.pw_name}' that runs "
            "gocryptfs and the server",
            "chmod 0666 /dev/fuse (Debian's usual mode for it)")
    gocryptfs = find_binary(["gocryptfs"], _SEARCH, PACKAGES)
    fusermount = find_binary(["fusermount3", "fusermount"], _SEARCH, PACKAGES)
    return gocryptfs, fusermount


def _user_can_open(path: Path, user: pwd.struct_passwd) -> bool:
    """True when ``user`` may read and write ``path`` by its mode bits (owner, group or others)."""
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid == user.pw_uid:
        return mode & 0o600 == 0o600
    if info.st_gid == user.pw_gid or user.pw_name in grp.getgrgid(info.st_gid).gr_mem:
        return mode & 0o060 == 0o060
    return mode & 0o006 == 0o006


def gocryptfs_version() -> str:
    """``gocryptfs 2.3; go-fuse ...`` (first line of ``gocryptfs -version``)."""
    gocryptfs, _ = check_available()
    out = subprocess.run([str(gocryptfs), "-version"], capture_output=True, text=True, check=False)
    return (out.stdout.strip().splitlines() or ["gocryptfs (unknown version)"])[0]


def _unescape_mount_field(text: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (``\\040``)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(code, char)
    return text


def mount_entry(target: Path) -> dict[str, str] | None:
    """The /proc/mounts entry whose mount point is ``target`` (last one wins), or None."""
    wanted = os.path.realpath(target)
    found = None
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and _unescape_mount_field(parts[1]) == wanted:
            found = {"source": _unescape_mount_field(parts[0]), "target": wanted, "fstype": parts[2],
                     "options": parts[3]}
    return found


@contextmanager
def temp_secret_file(password: str, owner: int | None = None) -> Iterator[Path]:
    """A 0600 file holding ``password`` inside a fresh 0700 temp dir; both removed afterwards."""
    directory = own_path(Path(tempfile.mkdtemp(prefix="tdebench-secret-")))  # for `tdebench cleanup`
    try:
        path = write_secret_file(directory / "pass", password)
        if owner is not None:
            os.chown(directory, owner, -1)
            os.chown(path, owner, -1)
        yield path
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class GocryptfsMount:
    """One gocryptfs filesystem: ``root/cipher`` (on disk) mounted at ``root/plain``."""

    def __init__(self, spec: EncryptionSpec, root: Path, owner: pwd.struct_passwd | None = None,
                 keys: KeyAccess | None = None) -> None:
        """``owner``: the OS user the database server runs as, if not us; gocryptfs runs as that user and
        the mount is reachable by that user only."""
        if not is_fs_spec(spec) or spec.cipher not in VARIANTS:
            raise UsageError(f"'{spec}' is not a gocryptfs spec", f"use one of: {', '.join(map(str, fs_specs()))}")
        self.spec = spec
        self.root = root
        self.cipher_dir = root / "cipher"
        self.plain_dir = root / "plain"
        self.owner = owner if owner is not None and owner.pw_uid != os.geteuid() else None
        self.algorithm, self._init_flags = VARIANTS[spec.cipher]
        self._password = generate_password(24)
        #: the config's key server: gocryptfs fetches the password from it (-extpass) instead
        self.key_access = keys
        self._server: ServerProcess | None = None
        #: a soft limit of the daemon's Go runtime (GOMEMLIMIT, bytes) from its next mount on; None: Go's default
        self.go_memory_limit: int | None = None

    # lifecycle ------------------------------------------------------------------------------
    def create(self) -> None:
        """``gocryptfs -init`` the cipher directory (first call only)."""
        if (self.cipher_dir / "gocryptfs.conf").is_file():
            return
        gocryptfs, _ = check_available()
        self.root.mkdir(parents=True, exist_ok=True)
        self.cipher_dir.mkdir(mode=0o700, exist_ok=True)
        if self.owner is not None:  # the mount's root directory shows the cipher directory's owner and mode
            os.chown(self.cipher_dir, self.owner.pw_uid, self.owner.pw_gid)
        as_owner = ({"user": self.owner.pw_uid, "group": self.owner.pw_gid, "extra_groups": []}
                    if self.owner is not None else {})
        with self._password_source() as (source, env):
            result = subprocess.run(
                [str(gocryptfs), "-init", "-q", *source, *self._init_flags, str(self.cipher_dir)],
                capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, env=env,
                preexec_fn=helper_preexec(), **as_owner)
        if result.returncode != 0:  # stdout may hold the master key on a terminal: show stderr only
            raise EnvironmentProblem(f"gocryptfs -init failed (code {result.returncode}): "
                                     f"{redact(result.stderr.strip())[-400:]}",
                                     f"check that {self.cipher_dir} is on a local, writable filesystem")

    def mount(self, timeout: float = 30.0) -> None:
        """Mount ``cipher/`` at ``plain/`` (creating the filesystem first if needed); idempotent."""
        if self.mounted() and self._server is not None and self._server.running():
            return
        if self.mounted():  # a stale mount from a crashed daemon
            self._fusermount(lazy=True)
        self.create()
        gocryptfs, _ = check_available()
        self.plain_dir.mkdir(mode=0o700, exist_ok=True)
        if any(self.plain_dir.iterdir()):
            raise EnvironmentProblem(f"mount point {self.plain_dir} is not empty",
                                     "remove its contents (nothing should be written there while unmounted)")
        if self.owner is not None:  # fusermount3 lets a user mount only on a directory it may write
            os.chown(self.plain_dir, self.owner.pw_uid, self.owner.pw_gid)
        with self._password_source() as (source, env):
            argv = [str(gocryptfs), "-fg", *source, str(self.cipher_dir), str(self.plain_dir)]
            # in a memory cgroup the Go collector must keep the heap within the daemon's share of the limit: left
            # to its default (collect when the heap has doubled) it grew past it under load and the kernel
            # killed the server sharing the group
            if self.go_memory_limit:
                env = {**(env or os.environ), "GOMEMLIMIT": str(self.go_memory_limit)}
            # huge pages off: Go 1.19's runtime asks for them, and in a memory cgroup its freed heap then stayed
            # charged 2 MiB at a time (48 MiB of huge pages in a 64 MiB group when the kernel ended mariadbd)
            self._server = ServerProcess("gocryptfs", argv, self.root / "gocryptfs.log", self.root / "gocryptfs.pid",
                                         user=self.owner, env=env, huge_pages=False)
            self._server.start(self.mounted, timeout=timeout)

    @contextmanager
    def _password_source(self) -> Iterator[tuple[list[str], dict[str, str] | None]]:
        """(gocryptfs' password options, its environment; None: ours): a pass file that is gone afterwards, or the
        key server's fetch through ``-extpass``."""
        if self.key_access is None:
            with temp_secret_file(self._password, owner=self.owner.pw_uid if self.owner else None) as passfile:
                yield ["-passfile", str(passfile)], None
            return
        python = next((p for p in ("/usr/bin/python3", "/bin/python3") if os.access(p, os.X_OK)), None)
        if python is None:
            raise EnvironmentProblem("gocryptfs' password helper needs the system's python3 (/usr/bin/python3)",
                                     "install the Debian package python3")
        env = {k: v for k, v in os.environ.items() if k not in _CALLER_VAULT}
        env.update(TDEBENCH_FETCH=_FETCH, TDEBENCH_KEY_URL=self.key_access.secret_url(1),
                   TDEBENCH_KEY_CA=str(self.key_access.ca_file or ""), VAULT_TOKEN=self.key_access.token())
        yield ["-extpass", f"{python} {_EXTPASS}"], env

    def unmount(self) -> None:
        """Unmount (``fusermount3 -u``, retried; lazy as the last resort) and end the daemon; idempotent."""
        lazy = self._fusermount() if self.mounted() else False
        server = self._server
        if server is not None:  # it exits by itself once unmounted (stop() then only forgets it); after a
            server.stop(graceful=lambda: None, timeout=1.0 if lazy else 10.0)  # lazy unmount: TERM, then KILL
        if self.mounted():
            raise EnvironmentProblem(f"could not unmount {self.plain_dir}",
                                     f"stop what still uses it (fuser -vm {self.plain_dir}) and run "
                                     f"fusermount3 -u {self.plain_dir}")
        self._server = None

    def _fusermount(self, lazy: bool = False, attempts: int = 8) -> bool:
        """Unmount with fusermount3, retried while busy, then lazily; True if it had to be lazy."""
        _, fusermount = check_available()
        for _ in range(1 if lazy else attempts):
            if not self.mounted():
                return lazy
            argv = [str(fusermount), "-u", *(["-z"] if lazy else []), str(self.plain_dir)]
            if subprocess.run(argv, capture_output=True, check=False).returncode == 0:
                return lazy
            time.sleep(0.25)
        if not lazy and self.mounted():
            return self._fusermount(lazy=True)
        return lazy

    def destroy(self, keep: bool = False) -> None:
        """Unmount and, unless ``keep``, delete the root directory (cipher dir, mount point, log)."""
        self.unmount()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)

    # facts ----------------------------------------------------------------------------------
    def mounted(self) -> bool:
        entry = mount_entry(self.plain_dir)
        return entry is not None and entry["fstype"].startswith("fuse")

    def pids(self) -> list[int]:
        """The gocryptfs daemon (its CPU time is the cost of the encryption)."""
        return self._server.tree_pids() if self._server is not None else []

    def conf_facts(self) -> dict[str, Any]:
        """Non-secret facts from ``gocryptfs.conf`` (never the encrypted master key or the salt)."""
        try:
            conf = json.loads((self.cipher_dir / "gocryptfs.conf").read_text())
        except (OSError, ValueError):
            return {}
        scrypt = conf.get("ScryptObject") or {}
        return {"creator": conf.get("Creator"), "version": conf.get("Version"),
                "feature_flags": list(conf.get("FeatureFlags") or []),
                "scrypt": {k: scrypt.get(k) for k in ("N", "R", "P", "KeyLen")}}

    def status(self) -> dict[str, Any]:
        """Mount-table and gocryptfs.conf facts; ``enabled`` only when mounted by gocryptfs."""
        entry = mount_entry(self.plain_dir)
        facts = self.conf_facts()
        flags = facts.get("feature_flags", [])
        if "XChaCha20Poly1305" in flags:
            content = "XChaCha20-Poly1305"
        elif "AESSIV" in flags:
            content = "AES-SIV-512"
        else:
            content = "AES-256-GCM" if facts else None
        enabled = bool(entry and entry["fstype"] == "fuse.gocryptfs")
        return {"enabled": enabled, "mechanism": "gocryptfs (FUSE filesystem)", "spec": str(self.spec),
                "content_cipher": content, "file_names": "EME-encrypted" if "EMENames" in flags else "plaintext",
                "cipher_dir": str(self.cipher_dir), "mount_point": str(self.plain_dir), "mount": entry,
                "gocryptfs_conf": facts, "covers": "every file of the data directory"}

    def status_of(self, data_directory: str | None) -> dict[str, Any]:
        """:meth:`status` for a server that reports ``data_directory`` (None: not running); ``enabled`` only when
        that directory is inside the mount."""
        status = self.status()
        inside = data_directory is not None and Path(data_directory).is_relative_to(self.plain_dir)
        status.update(data_directory=data_directory, data_directory_on_mount=inside,
                      enabled=bool(status["enabled"] and inside))
        return status

    def facts(self) -> dict[str, Any]:
        """What the manifest records of the mount (``fs_encryption``): tool, cipher, who runs it."""
        facts = {"tool": gocryptfs_version(), "cipher": self.algorithm,
                 "runs_as": self.owner.pw_name if self.owner else "(current user)",
                 "mount_reachable_by": "that user only (no -allow_other)",
                 "transparent_huge_pages": "off for the daemon (PR_SET_THP_DISABLE)"}
        if self.go_memory_limit:
            facts["go_memory_limit_bytes"] = self.go_memory_limit
        return {"fs_encryption": facts}

    def key_rows(self, roots: list[Path], home: Path) -> list[dict[str, Any]]:
        """The threat model's key-storage entries: the master key wrapped in gocryptfs.conf beside the encrypted
        files, and the password (memory only), searched for in clear under ``roots``; paths relative to ``home``."""
        conf = self.cipher_dir / "gocryptfs.conf"
        scrypt = self.conf_facts().get("scrypt") or {}
        where = os.path.relpath(conf, home) if conf.is_relative_to(home) else str(conf)
        running = "the gocryptfs daemon's memory (the master key; files in clear through the mount)"
        master = {"key": "gocryptfs master key", "where": f"{where}, beside the encrypted files",
                  "on_disk": conf.is_file(), "beside_data": same_disk(conf, self.cipher_dir), "mode": mode_text(conf),
                  "protected_by": f"AES-256-GCM under scrypt(password) (N={scrypt.get('N')})", "found_in_clear": [],
                  "running": {"where": running}}
        if self.key_access is not None:
            key = self.key_access.fetch(1)
            found = files_holding(roots, [key.hex().encode()])
            return [master, server_key_row(self.key_access, "gocryptfs password", "fetched by gocryptfs' -extpass "
                                           "helper at every mount", "the gocryptfs daemon's environment (VAULT_TOKEN)",
                                           [os.path.relpath(p, home) if Path(p).is_relative_to(home) else p
                                            for p in found])]
        found = files_holding(roots, [self._password.encode()])
        return [master,
                {"key": "gocryptfs password", "source": "file", "where": "memory only; a 0600 pass file in a private "
                 "temporary directory while gocryptfs starts, deleted right after", "on_disk": False,
                 "beside_data": False, "mode": None, "protected_by": "not stored",
                 "found_in_clear": [os.path.relpath(p, home) if Path(p).is_relative_to(home) else p for p in found],
                 "unattended": unattended("the password (a -passfile on the host)",
                                          "tdebench writes it to tmpfs only while gocryptfs starts"),
                 "running": {"where": running}}]

    def log_tail(self) -> str:
        return tail(self.root / "gocryptfs.log")
