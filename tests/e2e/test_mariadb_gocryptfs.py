"""MariaDB on gocryptfs end to end: real runs (TPC-H SF 0.01) with the plain twin beside ``fs:gocryptfs`` (and, where
loop devices exist, beside ``fs:fscrypt`` too, every twin on an ext4 image), the at-rest verdicts and threat rows
read from the run directory, and nothing left -- no gocryptfs mount, daemon or server -- after a finished run and a
Ctrl-C during provisioning or measurement.

The runs' work directories live in a private TMPDIR (tests/e2e/test_fscrypt.py's sandbox), so what is left is told
apart from other users of the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tdebench.engines.toolkit import fsencrypt
from tdebench.errors import EnvironmentProblem
from tests.e2e.test_fscrypt import (_measuring, assert_nothing_left, kill_while_measuring, mounts_under,  # noqa: F401
                                    sandbox, signal_when, start)


def _missing() -> str | None:
    if not (shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists()):
        return "mariadbd is not installed"
    try:
        fsencrypt.check_available()
    except EnvironmentProblem as exc:
        return exc.one_line()
    return None


pytestmark = [pytest.mark.server, pytest.mark.skipif(_missing() is not None, reason=str(_missing())),
              pytest.mark.slow(seconds=200)]
LOOPS = os.geteuid() == 0 and Path("/dev/loop-control").exists()


def our_processes(base: Path) -> list[str]:
    """gocryptfs daemons and servers whose command line names the sandbox."""
    out = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if str(base) in line and proc.pid != os.getpid():
            out.append(f"{proc.pid} {line}")
    return out


def nothing_left(base: Path, keys: set[str]) -> None:
    assert_nothing_left(base, keys)
    assert not our_processes(base), our_processes(base)


@pytest.mark.heavy  # MariaDB in gocryptfs in the default suite: test_encrypt_fs (switched into it), test_keyserver_*
def test_run_none_vs_gocryptfs(sandbox, tpch_sf001):  # noqa: F811
    """Plain against gocryptfs, and against fscrypt too where loop devices exist (fs:fscrypt needs root and them):
    the gocryptfs twin's checks are the same either way."""
    specs = "none,fs:fscrypt,fs:gocryptfs" if LOOPS else "none,fs:gocryptfs"
    base, keys = sandbox
    out = base / "run"
    proc = start(base, ["--engine", "mariadb", "--encryption", specs, "--sf", "0.01", "--trials", "1", "--warmup", "0",
                        "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    log, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, log[-3000:]
    configs = json.loads((out / "verification.json").read_text())["configs"]
    plain, enc = configs["mariadb-none"], configs["mariadb-fs-gocryptfs"]
    assert plain["passed"] and plain["marker_hits"] > 0 and plain["known_plaintext_hits"] > 0
    assert enc["passed"] and enc["encrypted_on_disk"] and enc["marker_hits"] == 0 and enc["known_plaintext_hits"] == 0
    status = enc["status"]
    assert status["enabled"] and status["filesystem"]["mount"]["fstype"] == "fuse.gocryptfs"
    assert status["filesystem"]["data_directory_on_mount"] and status["variables"]["innodb_encrypt_tables"] == "OFF"
    rows = {r["id"]: r["status"] for r in enc["threats"]["rows"]}
    for row in ("data_dir", "redo_log", "temp_files"):
        assert rows[row] == "protected", (row, enc["threats"]["rows"])
    assert rows["disk"] == "exposed"  # a mount made unattended reads its password from a file on the host
    assert rows["live_host"] == "exposed" and rows["select_user"] == "exposed"  # what gocryptfs does not stop
    assert all(c["answers_equal"] is not False for c in configs.values())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    if "fscrypt" in specs:  # one kind of filesystem under every twin
        assert {c["settings"]["storage"] for c in manifest["configs"]} == {"ext4-loop"}
    nothing_left(base, keys)


@pytest.mark.parametrize("when", [
    "provisioning",
    # heavy: Ctrl-C while measuring on an encrypted filesystem in the default suite: test_fscrypt (MariaDB, SQLite)
    pytest.param("measurement", marks=pytest.mark.heavy)])
def test_ctrl_c_leaves_no_mount_or_daemon(sandbox, when, tpch_sf001):  # noqa: F811
    base, keys = sandbox
    out = base / "run"
    proc = start(base, ["--engine", "mariadb", "--encryption", "none,fs:gocryptfs", "--sf", "0.01", "--trials", "20",
                        "--warmup", "0", "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    mounted = lambda: any(m.endswith("/gocryptfs/plain") for m in mounts_under(base))  # noqa: E731
    if when == "provisioning":  # the mount is up: the encrypted twin is being created
        log = signal_when(proc, mounted, signal.SIGINT)
    else:
        log = signal_when(proc, lambda: _measuring(out), signal.SIGINT, mounted)
    assert proc.returncode == 130, log[-3000:]
    nothing_left(base, keys)


@pytest.mark.heavy  # backups on an encrypted filesystem in the default suite:
# test_fscrypt.test_backups_under_fscrypt[sqlite]
def test_backups_read_and_restore_inside_the_mount(sandbox, tpch_sf001):  # noqa: F811
    """The backup workload on an fs:gocryptfs twin: mariadb-backup reads the datadir and copies a restore back into it
    as the server's OS user (the only one the mount admits); every kind restores the loaded rows, and every backup,
    written outside the mount, holds the canaries (gocryptfs covers the instance's files only)."""
    base, keys = sandbox
    out = base / "run"
    proc = start(base, ["--workload", "backup", "--engine", "mariadb", "--encryption", "none,fs:gocryptfs", "--sf",
                        "0.01", "--trials", "1", "--warmup", "0", "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    log, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, log[-3000:]
    backups = json.loads((out / "backups.json").read_text())["configs"]["mariadb-fs-gocryptfs"]["backups"]
    assert set(backups) == {"mariadb_backup", "mariadb_backup_gz", "mariadb_dump", "mariadb_dump_gz"}
    for kind, verdict in backups.items():
        assert verdict["encrypted"] is False and verdict["marker_hits"] > 0, kind
    rows = json.loads((out / "verification.json").read_text())["configs"]["mariadb-fs-gocryptfs"]["threats"]["rows"]
    assert {r["id"]: r["status"] for r in rows}["backups:mariadb_backup"] == "exposed"
    nothing_left(base, keys)


@pytest.mark.heavy  # a killed run on an encrypted filesystem in the default suite: test_fscrypt.test_killed_run_is_
# cleaned_up (images, loop devices, keys); gocryptfs' daemon and mount after a signal: test_ctrl_c_leaves_no_mount_...
def test_killed_run_is_cleaned_up(sandbox, tpch_sf001):  # noqa: F811
    """SIGKILL leaves the gocryptfs mount and the servers running; `tdebench cleanup` stops them and unmounts."""
    base, keys = sandbox
    out = base / "run"
    kill_while_measuring(start(base, ["--engine", "mariadb", "--encryption", "none,fs:gocryptfs", "--sf", "0.01",
                                      "--trials", "20", "--warmup", "0",
                                      "--data-dir", str(Path(tpch_sf001[0]).parent)], out), out)
    assert [m for m in mounts_under(base) if m.endswith("/gocryptfs/plain")] and our_processes(base)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
           "XDG_STATE_HOME": str(base / "state")}
    result = subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    nothing_left(base, keys)
