"""MariaDB through the engine conformance kit, plus MariaDB-specific checks (real servers)."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines.toolkit.exposure import files_holding
from tdebench.engines import Config, get_engine
from tdebench.engines.toolkit import fsencrypt
from tdebench.engines.toolkit.process import free_port
from tdebench.errors import EnvironmentProblem, RunFailed, UsageError
from tdebench.verify.atrest import new_markers, scan_directory
from tdebench.verify.threat_checks import live_host_row
from tdebench.verify.threat_rows import Needles
from tests.engines.kit import MARIADB_SMALL, kit_for
from tests.engines.test_fsencrypt import FS_MISSING
from tests.instances import run_sql

if not (Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd")):
    pytest.skip("mariadbd is not installed (Debian package mariadb-server)", allow_module_level=True)

pytestmark = pytest.mark.server

SMALL = MARIADB_SMALL  # small server for tests: the defaults (1G pool, 512M redo) are for benchmarks


@pytest.mark.slow(seconds=90)
class TestMariadbConformance(kit_for("mariadb")):
    """The conformance kit (tests/engines/kit.py) and MariaDB's own checks on the same loaded instances."""

    def test_no_secret_in_instance_files_or_command_lines(self, loaded):
        """Keys, file keys and passwords appear in no file of any instance (followed through the
        workdir symlinks) and in no mariadbd command line or environment."""
        secrets_ = self.instance_secrets()
        assert secrets_
        for inst in loaded.values():
            found = files_holding([Path(inst.data_dir)], secrets_)
            assert not found, f"a secret appears in {found[:5]}"
            for pid in inst.server_pids():
                proc = psutil.Process(pid)
                text = " ".join(proc.cmdline()).encode() + b"\0".join(
                    f"{k}={v}".encode() for k, v in proc.environ().items())
                assert not any(s in text for s in secrets_), f"a secret is on the command line of {pid}"

    def test_key_files_are_private_and_encrypted(self, loaded):
        for text, inst in _not_gocryptfs(loaded):
            root = Path(inst.data_dir)
            for sub in ("", "data", "tmp", "keys"):
                assert stat.S_IMODE((root / sub).stat().st_mode) == 0o700, (text, sub)
            key_file = root / "keys" / "keys.enc"
            if text == "none":
                assert not key_file.exists()
                continue
            assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
            blob = key_file.read_bytes()
            assert blob.startswith(b"Salted__")
            # the file key exists only while the server starts
            assert not (root / "keys" / "filekey").exists() and not (root / "keys" / "filekey").is_symlink()
            # the key file decrypts (openssl's own tool) to keys 1, 2 and 3 (re-keying) of the spec's length
            bits = parse_spec(text).key_bits
            plain = _openssl_decrypt(key_file, inst._keys.filekey)
            lines = plain.decode().split()
            assert [line.split(";")[0] for line in lines] == ["1", "2", "3"]
            assert all(len(line.split(";")[1]) == bits // 4 for line in lines), text
            # no key is in the file in clear (a short pattern such as b"1;" turns up in random ciphertext by chance)
            assert not any(line.split(";")[1].encode().lower() in blob.lower() for line in lines), text

    def test_settings_identical_across_twins_except_encryption(self, loaded):
        plain = loaded["none"].settings()
        assert plain["innodb_buffer_pool_size"] == "64M" and plain["innodb_flush_method"] == "O_DIRECT"
        for text, inst in loaded.items():
            if text == "none":
                continue
            settings = inst.settings()
            shared = {k: v for k, v in settings.items() if k in plain and k != "encryption_scope"}
            assert shared == {k: v for k, v in plain.items() if k != "encryption_scope"}, text
            if text.startswith("fs:"):  # no server-side encryption: the mount's facts instead
                assert settings["encryption_scope"] == "none" and "key_bits" not in settings
                assert settings["fs_encryption"]["cipher"] == "AES-256-GCM", settings["fs_encryption"]
                continue
            assert settings["file_key_management_encryption_algorithm"] == f"AES_{parse_spec(text).mode.upper()}"
            assert settings["key_bits"] == parse_spec(text).key_bits
            assert not any("keys" in str(v) and "/" in str(v) for v in settings.values())

    def test_status_reports_every_benchmark_tablespace(self, loaded):
        for text, inst in loaded.items():
            spaces = inst.encryption_status()["tablespaces"]
            assert spaces["total"] >= 8
            if text == "none" or text.startswith("fs:"):  # InnoDB encrypts nothing itself under gocryptfs
                assert spaces["encrypted"] == []
            else:
                assert spaces["unencrypted"] == [] and spaces["key_ids"] == [1]
                assert spaces["system_tablespace_encrypted"]

    def test_gocryptfs_holds_the_datadir_and_tmpdir(self, loaded):
        """fs:gocryptfs: the server's datadir and tmpdir are inside the mount, which runs as the server's user and
        admits no one else; what is on disk is the cipher directory (no file name of the datadir shows there);
        the key file, my.cnf and the server log stay outside; the daemon's CPU counts as the server's."""
        if "fs:gocryptfs" not in loaded:
            pytest.skip(f"gocryptfs not available: {FS_MISSING}")
        inst = loaded["fs:gocryptfs"]
        status = inst.encryption_status()
        mount = status["filesystem"]
        assert status["enabled"] and mount["mount"]["fstype"] == "fuse.gocryptfs" and mount["data_directory_on_mount"]
        assert mount["content_cipher"] == "AES-256-GCM" and mount["file_names"] == "EME-encrypted"
        conn = inst.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT @@GLOBAL.datadir, @@GLOBAL.tmpdir, @@GLOBAL.innodb_encrypt_tables")
            datadir, tmpdir, encrypt_tables = cur.fetchone()
        finally:
            conn.close()
        assert Path(datadir).is_relative_to(inst.fs.plain_dir) and Path(tmpdir).is_relative_to(inst.fs.plain_dir)
        assert encrypt_tables == "OFF"
        assert inst.data_dir == inst.fs.cipher_dir and (inst.data_dir / "gocryptfs.conf").is_file()
        names = {p.name for p in inst.data_dir.rglob("*")}
        assert not names & {"lineitem.ibd", "ibdata1", "ib_logfile0", "tpch", "mysql"}, names
        assert inst.fs.owner is None or inst.fs.owner.pw_uid == inst.user.pw_uid
        if os.geteuid() == 0 and inst.user is not None:  # root itself is refused by the mount
            with pytest.raises(PermissionError):
                os.listdir(inst.datadir)
        assert (inst.snapshot_dir / "gocryptfs.conf").is_file()
        assert set(inst.fs.pids()) <= set(inst.server_pids())
        markers = new_markers()
        inst.plant_canaries(markers)
        inst.flush_to_disk()
        row = live_host_row(inst.threats(), Needles(tuple(markers)))  # the mount, read as the only user it admits
        assert row.status == "exposed" and set(row.evidence["hits"]) == {f"canary-{i}" for i in range(1, 5)}, row
        assert ("read as the server's OS user" in row.summary) is (inst.fs.owner is not None)
        keys = inst.threats().key_storage()
        assert [k["key"] for k in keys] == ["gocryptfs master key", "gocryptfs password"]
        assert not any(k["found_in_clear"] for k in keys)
        before = inst.counters()["bytes_encrypted_estimate"]
        # pages and redo written through the mount count as encrypted by it
        run_sql(inst, "CREATE TABLE gocryptfs_probe ENGINE=InnoDB AS SELECT seq FROM seq_1_to_20000")
        inst.flush_to_disk()
        counters = inst.counters()
        assert counters["bytes_encrypted_estimate"] > before and "bytes_encrypted" not in counters
        assert counters["bytes_encrypted_estimate"] == counters["bytes_written"] + counters["log_bytes"]


def _not_gocryptfs(loaded: dict) -> list:
    """The kit's configs whose files tdebench can read directly (not inside a gocryptfs mount)."""
    return [(text, inst) for text, inst in loaded.items() if not text.startswith("fs:")]


def _openssl_decrypt(path: Path, passphrase: str) -> bytes:
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    out = subprocess.run(["openssl", "enc", "-d", "-aes-256-cbc", "-md", "sha1", "-pass", "stdin", "-in", str(path)],
                         input=passphrase.encode() + b"\n", capture_output=True, check=True)
    return out.stdout


@pytest.fixture(scope="module")
def engine():
    engine = get_engine("mariadb")
    engine.check_available()
    return engine


def test_unsupported_specs_raise_usage_error_listing_supported(engine, tmp_path):
    for text in ("tde:aes-512-cbc", "column:aes-256", "sqlcipher:aes-256-cbc", "tde:aes-256-gcm",
                 "tde:aes-256-ctr@everything"):
        try:
            spec = parse_spec(text)
        except UsageError:
            continue
        with pytest.raises(UsageError) as err:
            engine.create_instance(Config("mariadb", spec), tmp_path)
        message = str(err.value)
        assert "mariadb" in message and "\n" not in message
        for listed in ("none", "tde:aes-128-cbc", "tde:aes-192-ctr", "tde:aes-256-ctr", "tde:aes-256-cbc@tables",
                       "tde:aes-128-ctr@innodb"):
            assert listed in message
    assert list(tmp_path.iterdir()) == []


def test_managed_settings_are_rejected(engine):
    for key in ("datadir", "innodb_encrypt_tables", "innodb-encrypt-log", "file_key_management_filename",
                "encrypt_tmp_files", "plugin_load_add", "socket", "port"):
        with pytest.raises(UsageError, match="managed by tdebench"):
            engine.validate_settings({key: "x"})
    with pytest.raises(UsageError):
        engine.validate_settings({"innodb_buffer_pool_size": "1G\ninnodb_encrypt_tables=OFF"})
    engine.validate_settings({"innodb_buffer_pool_size": "2G", "innodb-flush-method": "fsync"})


def test_bad_server_setting_fails_with_log_tail(engine, tmp_path):
    for bad in ({"tdebench_no_such_variable": "1"}, {"innodb_flush_method": "no_such_method"}):
        inst = engine.create_instance(Config("mariadb", PLAIN, {**SMALL, **bad}), tmp_path)
        with pytest.raises(EnvironmentProblem) as err:
            inst.start()
        message = str(err.value)
        assert "[ERROR]" in message and next(iter(bad.values())) in message, message
        inst.destroy()
        assert not _own_servers()
        assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(FS_MISSING is not None, reason=f"gocryptfs not available: {FS_MISSING}")
@pytest.mark.parametrize("spec, flag", [("fs:gocryptfs-aessiv", "AESSIV"), ("fs:gocryptfs-xchacha", "XChaCha20Poly1305")])
def test_gocryptfs_variants_restart_and_destroy_leave_nothing(engine, spec, flag, tmp_path):
    """Each gocryptfs variant: rows survive a restart (unmount, mount again), no probe value reaches the cipher
    directory, and destroy leaves no process, mount or directory."""
    inst = engine.create_instance(Config("mariadb", parse_spec(spec), dict(SMALL)), tmp_path)
    try:
        inst.start()
        assert flag in inst.encryption_status()["filesystem"]["gocryptfs_conf"]["feature_flags"]
        run_sql(inst, "CREATE TABLE t ENGINE=InnoDB AS SELECT CONCAT('TDEBENCH-FS-PROBE-', seq) AS v FROM seq_1_to_500")
        mount = inst.fs.plain_dir
        inst.restart()
        assert inst.alive() and inst.encryption_status()["enabled"]
        assert run_sql(inst, "SELECT COUNT(*) FROM t") == [(500,)]
        inst.flush_to_disk()
        assert scan_directory(inst.data_dir, ["TDEBENCH-FS-PROBE-"]).files_with_hits == []
        pids, home = inst.server_pids(), inst.home
    finally:
        inst.destroy()
    time.sleep(0.2)
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not fsencrypt.mount_entry(mount) and not home.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(FS_MISSING is not None, reason=f"gocryptfs not available: {FS_MISSING}")
def test_gocryptfs_instance_that_fails_to_install_leaves_no_mount(engine, tmp_path):
    inst = engine.create_instance(Config("mariadb", parse_spec("fs:gocryptfs"),
                                         {**SMALL, "tdebench_no_such_variable": "1"}), tmp_path)
    with pytest.raises(EnvironmentProblem, match="tdebench_no_such_variable"):
        inst.start()
    inst.destroy()
    assert not [line for line in Path("/proc/mounts").read_text().splitlines() if str(tmp_path) in line]
    assert not _own_servers() and list(tmp_path.iterdir()) == []


def test_server_that_cannot_start_shows_its_log_tail(engine, tmp_path):
    """A server that fails after a good install (here: a bad option added by hand) shows its log's tail."""
    inst = engine.create_instance(Config("mariadb", PLAIN, dict(SMALL)), tmp_path)
    try:
        inst.start()
        inst.stop()
        cnf = Path(inst.data_dir) / "my.cnf"
        cnf.write_text(cnf.read_text() + "tdebench_broken_option=1\n")
        with pytest.raises(EnvironmentProblem) as err:
            inst.start()
        message = str(err.value)
        assert "exited during start-up" in message and "tdebench_broken_option" in message
        assert not _own_servers()
    finally:
        inst.destroy()
    assert list(tmp_path.iterdir()) == []


def test_killed_server_is_detected_and_restart_recovers(engine, tmp_path):
    inst = engine.create_instance(Config("mariadb", parse_spec("tde:aes-256-cbc"), dict(SMALL)), tmp_path)
    try:
        inst.start()
        run_sql(inst, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO t VALUES (1, 'kept')")
        pid = inst.server_pids()[0]
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):  # let the engine notice (and reap) the dead server itself
            if not inst.running():
                break
            time.sleep(0.1)
        with pytest.raises(EnvironmentProblem, match="no longer running .*signal 9"):
            inst.connect()
        inst.restart()  # crash recovery with the same keys
        assert run_sql(inst, "SELECT v FROM t") == [("kept",)]
    finally:
        inst.destroy()
    assert not _own_servers()


def test_scope_tables_encrypts_tablespaces_but_not_the_redo_log(engine, tmp_path):
    inst = engine.create_instance(Config("mariadb", parse_spec("tde:aes-128-ctr@tables"), dict(SMALL)), tmp_path)
    try:
        inst.start()
        markers = new_markers()
        inst.plant_canaries(markers)
        inst.flush_to_disk()
        inst.check_encrypted(["tdebench_canary"])
        status = inst.encryption_status()
        assert status["enabled"] and status["variables"]["innodb_encrypt_log"] == "OFF"
        outside = inst.files_outside_scope()
        root = Path(inst.data_dir)
        hits = scan_directory(root, markers).files_with_hits
        assert "data/ib_logfile0" in hits  # proves the canaries reached disk in plaintext outside the scope
        for path in hits:
            assert any(root.joinpath(path) in root.glob(g) for g in outside), path
    finally:
        inst.destroy()


def test_unencrypted_tablespace_is_refused_with_reason(engine, tmp_path):
    inst = engine.create_instance(Config("mariadb", parse_spec("tde:aes-192-cbc"), dict(SMALL)), tmp_path)
    try:
        inst.start()
        run_sql(inst, "CREATE TABLE sneaky (id INT PRIMARY KEY) ENCRYPTED=NO", "CREATE TABLE fine (id INT PRIMARY KEY)")
        with pytest.raises(RunFailed, match="tdebench/sneaky: not encrypted") as err:
            inst.check_encrypted(["fine", "sneaky"], grace=1.0)
        assert "tpch/fine" not in str(err.value)
        with pytest.raises(RunFailed, match="tdebench/missing: no InnoDB tablespace"):
            inst.check_encrypted(["fine", "missing"], grace=0.0)
    finally:
        inst.destroy()


def test_tcp_listens_on_loopback_only(engine, tmp_path):
    inst = engine.create_instance(Config("mariadb", PLAIN, dict(SMALL), tcp=True), tmp_path)
    try:
        inst.start()
        [(bind, port, skip)] = run_sql(inst, "SELECT @@bind_address, @@port, @@skip_networking")
        assert bind == "127.0.0.1" and port > 0 and not skip
        assert inst.settings()["listen"].startswith("127.0.0.1")
        conns = [c for c in psutil.Process(inst.server_pids()[0]).net_connections("inet")
                 if c.status == psutil.CONN_LISTEN]
        assert conns and all(c.laddr.ip == "127.0.0.1" for c in conns)
    finally:
        inst.destroy()


def test_socket_only_by_default(engine, tmp_path):
    inst = engine.create_instance(Config("mariadb", PLAIN, dict(SMALL)), tmp_path)
    try:
        inst.start()
        assert not [c for c in psutil.Process(inst.server_pids()[0]).net_connections("inet")
                    if c.status == psutil.CONN_LISTEN]
        assert inst.socket.is_socket()
        assert free_port()  # nothing of ours holds a port
    finally:
        inst.destroy()
    assert not os.path.lexists(tmp_path / "mariadb-none")


def test_a_kept_instance_with_a_long_path_leaves_no_socket_directory_in_tmp(engine, tmp_path):
    """A socket path too long for sun_path moves to /tmp/tdebench-sock-*; --keep keeps the instance's files, not
    that directory (it held only the stopped server's socket, and kept runs of the test suite piled them up)."""
    base = Path(tempfile.mkdtemp(prefix="t-kept-socket-"))  # traversable by the service user, unlike tmp_path
    base.chmod(0o755)
    deep = base / ("d" * 60) / ("e" * 40)
    deep.mkdir(parents=True)
    for d in (deep, deep.parent):
        d.chmod(0o755)
    try:
        inst = engine.create_instance(Config("mariadb", PLAIN, dict(SMALL), keep=True), deep)
        try:
            inst.start()
            moved = inst.socket.parent
            assert moved.parent == Path("/tmp") and moved.name.startswith("tdebench-sock-")
        finally:
            inst.destroy()
        assert not moved.exists()
        assert (deep / "mariadb-none" / "data").is_dir(), "keep: the instance's own files stay"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _own_servers() -> list[int]:
    """mariadbd processes started by this test process (children, any depth)."""
    return [p.pid for p in psutil.Process().children(recursive=True) if "mariadbd" in p.name()]
