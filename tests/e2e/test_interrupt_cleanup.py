"""`tdebench cleanup` and the ownership records: what a killed run owned is found and removed, and nothing
else is ever touched (live runs, recycled PIDs, directories that are not tdebench's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tdebench.runner import cleanup
from tdebench.runner.owned import MARK, owned_dirs_in_argv, read_records, removable, started_at
from tdebench.runner.ownership import Ownership

ROOT = Path(__file__).resolve().parents[2]


def tdebench(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(state)}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def _dead_pid() -> tuple[int, float]:
    """PID and start time of a process that has exited."""
    proc = subprocess.Popen(["true"])
    started = started_at(proc.pid) or time.time()
    proc.wait()
    return proc.pid, started


@pytest.fixture
def killed_run(tmp_path):
    """A record as a SIGKILLed run leaves it: a server in its own session, a work dir with a symlink to a
    secret directory in /dev/shm (or TMPDIR), and its pid file."""
    state = tmp_path / "state"
    work = Path(tempfile.mkdtemp(prefix="tdebench-t10run-"))
    (work / "inst").mkdir()
    outside_root = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path(tempfile.gettempdir())
    outside = Path(tempfile.mkdtemp(prefix="tdebench-mariadb-", dir=outside_root))
    (outside / "filekey").write_text("secret")
    (work / "inst" / "filekey").symlink_to(outside / "filekey")
    server = subprocess.Popen(["sleep", "300"], start_new_session=True)
    owner, owner_started = _dead_pid()
    record = {"version": 1, "run_id": "t10run", "run_dir": str(tmp_path / "run"), "keep": False,
              "owner": {"pid": owner, "started": owner_started, "argv": ["tdebench", "run"]},
              "dirs": [str(work)],
              "servers": [{"pid": server.pid, "started": started_at(server.pid), "name": "sleep",
                           "pid_file": str(work / "inst" / "server.pid"), "paths": []}]}
    (state / "tdebench" / "owned").mkdir(parents=True)
    path = state / "tdebench" / "owned" / f"{owner}-t10run.json"
    path.write_text(json.dumps(record))
    yield state, path, work, outside, server
    server.kill()
    server.wait()
    for directory in (work, outside):
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def test_cleanup_removes_what_a_killed_run_owned(killed_run):
    state, path, work, outside, server = killed_run
    listing = tdebench("cleanup", "--dry-run", state=state)
    assert listing.returncode == 0 and f"server {server.pid} (sleep)" in listing.stdout and str(work) in listing.stdout
    assert server.poll() is None and work.exists()  # a dry run touches nothing
    started = time.monotonic()
    result = tdebench("cleanup", state=state)
    assert result.returncode == 0, result.stderr
    assert "stopped 1 server(s)" in result.stdout and time.monotonic() - started < 10
    assert server.wait(timeout=5) is not None
    assert not work.exists() and not outside.exists()  # the symlinked secret directory went too
    assert not path.exists()
    assert "nothing to clean up" in tdebench("cleanup", state=state).stdout


def test_run_warns_about_leftovers_of_killed_runs(killed_run, tmp_path):
    state, _, _, _, server = killed_run
    warning = cleanup.leftover_warning(state / "tdebench" / "owned")
    assert warning is not None and "t10run" in warning and "1 server process(es)" in warning
    assert "tdebench cleanup" in warning and "\n" not in warning
    assert server.poll() is None  # warning only


def test_tdebench_run_prints_the_warning(killed_run, tmp_path):
    state, _, _, _, server = killed_run
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = tdebench("run", "--out", str(tmp_path / "out"), "--data-dir", str(blocker / "data"), state=state)
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("tdebench: warning: 1 killed run(s) left servers or files behind: t10run")
    assert "run `tdebench cleanup`" in lines[0] and lines[-1].startswith("tdebench: error:")
    assert server.poll() is None


def test_live_runs_and_recycled_pids_are_left_alone(killed_run):
    state, path, work, _, server = killed_run
    record = json.loads(path.read_text())
    record["owner"] = {"pid": os.getpid(), "started": started_at(os.getpid()), "argv": []}  # alive: this test
    path.write_text(json.dumps(record))
    result = tdebench("cleanup", state=state)
    assert "still running: left alone" in result.stdout
    assert server.poll() is None and work.exists()
    owner, owner_started = _dead_pid()
    record["owner"] = {"pid": owner, "started": owner_started, "argv": []}
    record["servers"][0]["started"] = (started_at(server.pid) or 0) - 1000  # same PID, another process
    path.write_text(json.dumps(record))
    result = tdebench("cleanup", state=state)
    assert result.returncode == 0 and server.poll() is None  # never kill a process we did not start
    assert not work.exists()


def test_keep_runs_keep_their_directories(killed_run):
    state, path, work, _, server = killed_run
    record = json.loads(path.read_text())
    record["keep"] = True
    path.write_text(json.dumps(record))
    result = tdebench("cleanup", state=state)
    assert result.returncode == 0 and "kept 1 dir(s)" in result.stdout
    assert server.wait(timeout=5) is not None and work.exists() and not path.exists()


def test_only_tdebench_directories_are_removable(tmp_path):
    for path in ("/", "/tmp", "/var/tmp", "/dev/shm", str(Path.home()), "/etc", str(tmp_path)):
        assert not removable(Path(path)), path
    assert removable(Path("/tmp/tdebench-run-abc"))
    assert removable(Path("/data/bench/tdebench-run-abc/mariadb-none"))
    argv = ["/usr/bin/gocryptfs", "-passfile", f"{tempfile.gettempdir()}/tdebench-secret-x/pass",
            "--defaults-file=/var/tmp/tdebench-mariadb-none-1/my.cnf", "/etc/passwd"]
    assert owned_dirs_in_argv(argv) == [f"{tempfile.gettempdir()}/tdebench-secret-x",
                                        "/var/tmp/tdebench-mariadb-none-1"]


def test_a_users_tdebench_named_directory_above_tmpdir_is_never_ours(monkeypatch, tmp_path):
    """TMPDIR=/tmp/tdebench-probe/work once made /tmp/tdebench-probe (and the user's files in it) ours."""
    from tdebench.runner import owned

    top = Path("/tmp") / f"tdebench-probe-{os.getpid()}"
    work = top / "work"
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    assert owned_dirs_in_argv(["/usr/bin/initdb", f"--pwfile={work}/tdebench-secret-x/pass"]) == []
    monkeypatch.setattr(tempfile, "tempdir", None)
    run_dir = Path("/var/tmp") / f"tdebench-results-{os.getpid()}" / "run1"
    monkeypatch.setattr(owned, "_PROTECTED", set())
    owned.protect(run_dir)
    assert owned_dirs_in_argv([f"{run_dir.parent}/x"]) == []
    assert owned_dirs_in_argv(["/var/tmp/tdebench-mariadb-none-2/my.cnf"]) == ["/var/tmp/tdebench-mariadb-none-2"]


def test_ownership_record_follows_servers(tmp_path):
    """Started servers are added, stopped ones dropped; the record goes when nothing is left."""
    from tdebench.engines.toolkit.process import ServerProcess

    work = Path(tempfile.mkdtemp(prefix="tdebench-t10own-"))
    owned = Ownership("t10own", tmp_path / "run", keep=False, directory=tmp_path / "owned")
    owned.add_dir(work)
    owned.add_dir(Path("/etc"))  # refused: not a tdebench directory
    server = ServerProcess("sleeper", ["sleep", "60"], work / "log", work / "sleeper.pid")
    server.start(lambda: True)
    record = json.loads(owned.path.read_text())
    assert [s["pid"] for s in record["servers"]] == [server.pid] and record["dirs"] == [str(work)]
    assert oct(owned.path.stat().st_mode & 0o777) == "0o600"
    server.stop()
    assert json.loads(owned.path.read_text())["servers"] == []
    owned.close()
    assert owned.path.exists()  # the work dir still exists: cleanup would find it
    assert read_records(tmp_path / "owned")[0][1]["owner"]["exited"]
    subprocess.run(["rm", "-rf", str(work)], check=True)
    for path, record in read_records(tmp_path / "owned"):
        assert cleanup.leftovers(record).empty
    assert not psutil.pid_exists(server.pid) or psutil.Process(server.pid).status() == psutil.STATUS_ZOMBIE


def test_cleanup_ends_the_clients_and_helpers_of_a_killed_run(killed_run):
    """A client the record names (PID and start time) and a helper's child it does not name but that carries the
    run's mark in its environment are ended, and counted; a process with another run's mark is left alone."""
    state, path, _, _, server = killed_run
    record = json.loads(path.read_text())
    record["mark"] = "t10run-mark"
    client = subprocess.Popen(["sleep", "300"])
    marked = subprocess.Popen(["sleep", "300"], env={**os.environ, MARK: "t10run-mark"})
    other = subprocess.Popen(["sleep", "300"], env={**os.environ, MARK: "another-run"})
    try:
        record["processes"] = [{"pid": client.pid, "started": started_at(client.pid), "name": "sleep 300"}]
        path.write_text(json.dumps(record))
        listing = tdebench("cleanup", "--dry-run", state=state)
        assert f"process {client.pid} (sleep 300)" in listing.stdout and f"process {marked.pid}" in listing.stdout
        assert f"process {other.pid}" not in listing.stdout
        result = tdebench("cleanup", state=state)
        assert result.returncode == 0, result.stderr
        assert "stopped 1 server(s), ended 2 other process(es)" in result.stdout
        assert client.wait(timeout=5) is not None and marked.wait(timeout=5) is not None
        assert other.poll() is None and server.wait(timeout=5) is not None
    finally:
        for proc in (client, marked, other):
            proc.kill()
            proc.wait()


def test_ownership_record_names_the_processes_and_gives_programs_its_mark(tmp_path):
    from tdebench.engines.toolkit.process import own_processes

    owner = Ownership("t10marks", tmp_path / "run", keep=False, directory=tmp_path / "owned")
    child = subprocess.Popen(["sleep", "300"])
    try:
        mark = json.loads(owner.path.read_text())["mark"]
        assert os.environ[MARK] == mark  # every program started now inherits it
        assert settled_environ(child.pid).get(MARK) == mark
        own_processes([child.pid])
        assert [p["pid"] for p in json.loads(owner.path.read_text())["processes"]] == [child.pid]
    finally:
        child.kill()
        child.wait()
        owner.close()
    assert MARK not in os.environ


def settled_environ(pid: int) -> dict[str, str]:
    """A process's environment once its exec has settled (/proc/PID/environ reads empty until then; 5 s at most)."""
    seen, deadline = {}, time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        seen = psutil.Process(pid).environ()
        time.sleep(0 if seen else 0.05)
    return seen

