"""MariaDB on a full disk (real servers on a small tmpfs): writes that MariaDB answers by waiting for space
(binary log, MyISAM, Aria) end the statement and the run within seconds, with the disk-full error (exit 3);
the run resumes once there is room again."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pymysql
import pytest

from tdebench.encryption import PLAIN
from tdebench.engines import Config, get_engine
from tdebench.engines.mariadb.watchdog import DiskFullWatchdog

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "8M", "innodb_log_buffer_size": "4M"}

pytestmark = pytest.mark.server


def _mount(size: str) -> Iterator[Path]:
    """A tmpfs the unprivileged server user can reach (pytest's temp dirs are 0700); unmounted afterwards."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    if not (Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd")):
        pytest.skip("mariadbd is not installed (Debian package mariadb-server)")
    target = Path(tempfile.mkdtemp(prefix="diskfull-", dir="/tmp"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(target)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        target.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield target
    finally:
        if subprocess.run(["umount", str(target)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)
        target.rmdir()
        assert str(target) not in Path("/proc/mounts").read_text()


@pytest.fixture
def small_fs() -> Iterator[Path]:
    yield from _mount("200m")


def fill(path: Path) -> None:
    """Write ``path`` until the filesystem has no byte left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 512, 1):
            block = b"\0" * size
            try:
                while True:
                    os.write(fd, block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)


def servers_in(path: Path) -> list[int]:
    """PIDs of mariadbd processes whose command line names ``path``."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        if proc.info["name"] == "mariadbd" and str(path) in " ".join(proc.info["cmdline"] or []):
            found.append(proc.pid)
    return found


# --- the watchdog on its own: a MyISAM/Aria statement waiting for space is killed ---------------------------
@pytest.mark.parametrize("table_engine, log_seen", [("MyISAM", True), ("Aria", False)],
                         ids=["myisam-log-line", "aria-process-list"])
def test_statement_waiting_for_space_is_killed(small_fs, table_engine, log_seen):
    """MariaDB logs "Disk is full writing ... Waiting for someone to free space" and waits for ever; the watchdog
    KILLs the statement within seconds. Without the log line (lost when the log is on the full disk too) the
    process list finds the waiting statement."""
    inst = get_engine("mariadb").create_instance(Config("mariadb", PLAIN, settings=SMALL), small_fs)
    inst.start()
    dog = None
    try:
        if not log_seen:  # only a watchdog that cannot read the log looks
            inst._watchdog.stop()
            dog = DiskFullWatchdog("test", small_fs / "no-such.log", inst.data_dir,
                                   lambda: inst._connect(timeout=5, use_database=False))
            dog.start()
        conn = inst.connect()
        cur = conn.cursor()
        cur.execute(f"CREATE TABLE t (id INT, s VARCHAR(200)) ENGINE={table_engine}")
        fill(small_fs / "filler")
        started = time.monotonic()
        with pytest.raises(pymysql.err.OperationalError):
            cur.execute("INSERT INTO t SELECT seq, REPEAT('y', 200) FROM seq_1_to_500000")
        assert time.monotonic() - started < 10
        problem = inst.problem() if log_seen else dog.problem
        assert isinstance(problem, OSError) and problem.errno == errno.ENOSPC
        assert ("t.MYD" in str(problem)) if log_seen else ("INSERT INTO t" in str(problem)), problem
    finally:
        if dog is not None:
            dog.stop()
        inst.destroy()
    assert not servers_in(small_fs)


# --- a whole run: the binary log fills the disk during a trial -------------------------------------------
def _fill_when_in_flight(manifest: Path, fs: Path, filled: list[float], stop: threading.Event) -> None:
    """Fill ``fs`` shortly after the first trial started (the RF1/RF2 commits then wait in the binlog)."""
    while not stop.is_set():
        try:
            if json.loads(manifest.read_text()).get("in_flight"):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    else:
        return
    time.sleep(0.3)
    fill(fs / "filler")
    filled.append(time.monotonic())


def _tdebench(args: list[str], state: Path, fs: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run the CLI; a run that hangs is killed with its servers (and the test fails) instead of hanging the suite."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(state)}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        for pid in servers_in(fs):  # servers run in sessions of their own
            os.kill(pid, signal.SIGKILL)
        pytest.fail(f"tdebench hung for {timeout:.0f} s on a full disk; stderr:\n{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_run_fails_fast_when_the_binlog_fills_the_disk(small_fs, tmp_path, tpch_sf001):
    """Before: the trial's COMMIT waited for space for ever. Now: exit 3 within seconds, one error line naming the
    full disk and the resume command, nothing left behind; after freeing space, --resume completes the run."""
    out, state = tmp_path / "run", tmp_path / "state"
    args = ["run", "--engine", "mariadb", "--encryption", "none", "--trials", "1", "--warmup", "1",
            "--no-report", "--skip-disk-check", "--work-dir", str(small_fs), "--out", str(out),
            "--data-dir", str(Path(tpch_sf001[0]).parent), "--server-setting", "log_bin=ON",
            *[a for k, v in SMALL.items() for a in ("--server-setting", f"{k}={v}")]]
    filled: list[float] = []
    stop = threading.Event()
    filler = threading.Thread(target=_fill_when_in_flight, args=(out / "manifest.json", small_fs, filled, stop))
    filler.start()
    try:
        done = _tdebench(args, state, small_fs, timeout=90)
    finally:
        stop.set()
        filler.join()
    ended = time.monotonic()
    errors = [line for line in done.stderr.splitlines() if line.startswith("tdebench: error:")]
    assert done.returncode == 3 and len(errors) == 1, done.stderr
    assert filled and ended - filled[0] < 30, "the run did not end soon after the disk filled"
    # the binlog's endless wait, or InnoDB's "table is full" when its write meets the full disk first (timing)
    assert "disk filled up" in errors[0] and ("waits for free disk space" in errors[0] or "is full" in errors[0]), \
        errors[0]
    assert f"tdebench run --resume {out}" in errors[0] and "Traceback" not in done.stderr
    assert json.loads((out / "manifest.json").read_text())["status"].startswith("failed: disk full")
    assert not servers_in(small_fs)
    assert [p.name for p in small_fs.iterdir()] == ["filler"]  # the instance is gone
    assert not list((state / "tdebench" / "owned").glob("*.json"))

    (small_fs / "filler").unlink()
    again = _tdebench(["run", "--resume", str(out), "--no-report"], state, small_fs, timeout=180)
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "completed"
    assert not servers_in(small_fs) and not list(small_fs.iterdir())
