"""gocryptfs mounts on their own (no database): init, mount, what lands on disk, unmount, errors."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tdebench.encryption import issued_secrets, parse_spec
from tdebench.engines.toolkit import fsencrypt
from tdebench.engines.toolkit.process import live_processes, service_user
from tdebench.errors import EnvironmentProblem, UsageError


def _missing() -> str | None:
    try:
        fsencrypt.check_available()
    except EnvironmentProblem as exc:
        return exc.one_line()
    return None


FS_MISSING = _missing()
needs_fuse = pytest.mark.skipif(FS_MISSING is not None, reason=f"gocryptfs cannot run here: {FS_MISSING}")


@pytest.fixture
def mount(tmp_path):
    fs = fsencrypt.GocryptfsMount(parse_spec("fs:gocryptfs"), tmp_path / "fs")
    yield fs
    fs.destroy()


@needs_fuse
def test_mount_write_scan_unmount(mount):
    mount.mount()
    assert mount.mounted() and mount.status()["enabled"]
    marker = b"TDEBENCH-FSENCRYPT-MARKER-0123456789"
    (mount.plain_dir / "notes").mkdir()
    (mount.plain_dir / "notes" / "secret-name.txt").write_bytes(marker * 100)
    os.sync()
    files = [p for p in mount.cipher_dir.rglob("*") if p.is_file()]
    assert len(files) >= 3  # gocryptfs.conf, diriv files, the file itself
    for path in files:
        data = path.read_bytes()
        assert marker not in data and b"secret-name" not in path.name.encode(), path
    assert mount.pids() and psutil.pid_exists(mount.pids()[0])
    pids = mount.pids()
    mount.unmount()
    mount.unmount()  # idempotent
    assert not mount.mounted() and not any(mount.plain_dir.iterdir())
    time.sleep(0.2)
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert all(s.pid not in pids for s in live_processes())
    mount.mount()  # remount: the same password, the data is back
    assert (mount.plain_dir / "notes" / "secret-name.txt").read_bytes() == marker * 100


@needs_fuse
def test_status_facts_never_hold_secrets(mount, monkeypatch):
    made: list[Path] = []  # this process's secret directories (other workers of the suite make their own)
    real_mkdtemp = tempfile.mkdtemp

    def recording(*args, **kwargs):
        path = real_mkdtemp(*args, **kwargs)
        if Path(path).name.startswith("tdebench-secret-"):
            made.append(Path(path))
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    mount.mount()
    status = mount.status()
    assert status["content_cipher"] == "AES-256-GCM" and status["file_names"] == "EME-encrypted"
    assert status["mount"]["fstype"] == "fuse.gocryptfs"
    text = repr(status)
    assert "EncryptedKey" not in text and "Salt" not in text
    assert not any(s in text for s in issued_secrets())
    # the password reached gocryptfs through a temporary file that is gone
    assert made and not [p for p in made if (p / "pass").exists()], made
    for path in mount.root.rglob("*"):
        if path.is_file() and not path.is_relative_to(mount.plain_dir):
            data = path.read_bytes()
            assert not any(s.encode() in data for s in issued_secrets() if len(s) >= 16), path


@needs_fuse
@pytest.mark.parametrize("spec, flag, name", [("fs:gocryptfs-aessiv", "AESSIV", "AES-SIV-512"),
                                              ("fs:gocryptfs-xchacha", "XChaCha20Poly1305", "XChaCha20-Poly1305")])
def test_variants(spec, flag, name, tmp_path):
    fs = fsencrypt.GocryptfsMount(parse_spec(spec), tmp_path / "fs")
    try:
        fs.mount()
        status = fs.status()
        assert flag in status["gocryptfs_conf"]["feature_flags"] and status["content_cipher"] == name
    finally:
        fs.destroy()
    assert not fs.mounted() and not fs.cipher_dir.exists()


@needs_fuse
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount for another user")
def test_mount_runs_as_the_service_user_and_admits_only_it():
    """gocryptfs as root with -allow_other hits gocryptfs#892 (random EPERM): it must run as the server's user."""
    user = service_user()
    base = Path(tempfile.mkdtemp(prefix="tdebench-fstest-"))  # pytest's tmp dirs are 0700 root
    os.chmod(base, 0o755)
    fs = fsencrypt.GocryptfsMount(parse_spec("fs:gocryptfs"), base / "fs", owner=user)
    try:
        fs.mount()
        options = fs.status()["mount"]["options"]
        assert f"user_id={user.pw_uid}" in options and "allow_other" not in options, options
        assert {psutil.Process(pid).uids().effective for pid in fs.pids()} == {user.pw_uid}
        assert (fs.cipher_dir / "gocryptfs.conf").stat().st_uid == user.pw_uid
        probe = subprocess.run(["/usr/bin/touch", str(fs.plain_dir / "probe")], user=user.pw_uid, group=user.pw_gid,
                               extra_groups=[], capture_output=True, check=False)
        assert probe.returncode == 0, probe.stderr
        with pytest.raises(PermissionError):  # nobody else, root included, gets in
            os.listdir(fs.plain_dir)
        assert len([p for p in fs.cipher_dir.iterdir() if p.name not in ("gocryptfs.conf", "gocryptfs.diriv")]) == 1
    finally:
        fs.destroy()
        shutil.rmtree(base, ignore_errors=True)
    assert not base.exists()


@needs_fuse
def test_busy_mount_is_unmounted_lazily(mount):
    mount.mount()
    handle = open(mount.plain_dir / "open-file", "w")  # keeps the mount busy
    pids = mount.pids()
    try:
        mount.unmount()
        assert not mount.mounted()
        time.sleep(0.2)
        assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    finally:
        try:
            handle.close()
        except OSError:  # ENOTCONN: the file system under it is gone, as intended
            pass


def test_rejects_non_gocryptfs_specs(tmp_path):
    with pytest.raises(UsageError):
        fsencrypt.GocryptfsMount(parse_spec("column:aes-256"), tmp_path)
    assert [str(s) for s in fsencrypt.fs_specs()] == ["fs:gocryptfs", "fs:gocryptfs-aessiv", "fs:gocryptfs-xchacha"]


def test_missing_binaries_name_the_packages(monkeypatch, tmp_path):
    if not Path("/dev/fuse").exists():
        with pytest.raises(EnvironmentProblem, match="fuse3"):
            fsencrypt.check_available()
        return
    monkeypatch.setattr(fsencrypt, "_SEARCH", (tmp_path,))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem) as err:
        fsencrypt.check_available()
    assert "gocryptfs fuse3" in str(err.value)


def test_missing_dev_fuse(monkeypatch):
    real_stat = Path.stat

    def fake_stat(self, *args, **kwargs):
        if str(self) == "/dev/fuse":
            raise FileNotFoundError(self)
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", fake_stat)
    with pytest.raises(EnvironmentProblem) as err:
        fsencrypt.check_available()
    assert "/dev/fuse" in str(err.value) and "gocryptfs fuse3" in str(err.value)


def test_mount_table_parsing(monkeypatch, tmp_path):
    target = tmp_path / "with space"
    target.mkdir()
    escaped = str(target).replace(" ", "\\040")
    fake = f"/x/cipher {escaped} fuse.gocryptfs rw,allow_other 0 0\n"
    real_read = Path.read_text

    def fake_read(self, *args, **kwargs):
        return fake if str(self) == "/proc/mounts" else real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", fake_read)
    entry = fsencrypt.mount_entry(target)
    assert entry == {"source": "/x/cipher", "target": str(target), "fstype": "fuse.gocryptfs",
                     "options": "rw,allow_other"}


def test_dev_fuse_the_service_user_cannot_open_is_refused_with_the_fix(tmp_path):
    """gocryptfs runs as the server's OS user: a /dev/fuse only root can open (0600, seen on a fresh machine here)
    is refused before any work, naming the mode and the fix, instead of a mount failing mid-run."""
    import pwd

    user = pwd.getpwuid(os.getuid())
    other = tmp_path / "device"
    other.write_text("")
    os.chmod(other, 0o600)
    stranger = pwd.struct_passwd(("nobody-here", "x", user.pw_uid + 4242, user.pw_gid + 4242, "", "/", "/bin/false"))
    assert not fsencrypt._user_can_open(other, stranger)
    os.chmod(other, 0o666)
    assert fsencrypt._user_can_open(other, stranger)
    os.chmod(other, 0o600)
    assert fsencrypt._user_can_open(other, user)  # its owner


def test_check_available_refuses_dev_fuse_closed_to_the_service_user(monkeypatch):
    if not Path("/dev/fuse").exists() or os.geteuid() != 0:
        pytest.skip("needs /dev/fuse and root (the service user exists only then)")
    monkeypatch.setattr(fsencrypt, "_user_can_open", lambda path, user: False)
    with pytest.raises(EnvironmentProblem, match="chmod 0666 /dev/fuse"):
        fsencrypt.check_available()
