"""Helpers interrupted at any moment leave nothing running or on disk: a helper's process group (mariadb-install-db
or initdb, and the bootstrap server it starts) is ended and waited for even when the interrupt lands while the run
records it, and the SQLite layout check's ``tdebench-probe-*`` directory goes however its child ends."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tdebench.engines.postgres.server import PgCluster
from tdebench.engines.sqlite import counters
from tdebench.engines.toolkit import process


@pytest.fixture(autouse=True)
def ctrl_c_raises() -> Iterator[None]:
    """A Ctrl-C raises KeyboardInterrupt in the main thread, as in tdebench (pytest-xdist's workers ignore SIGINT)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_for(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.01)


def test_an_interrupt_while_a_helper_is_recorded_ends_its_whole_group(tmp_path, monkeypatch):
    """The helper (a shell) starts a child of its own, as mariadb-install-db starts mariadbd; the interrupt lands
    while the ownership record is written. Both are gone when run_group raises."""
    child_pid = tmp_path / "child.pid"

    def interrupted_while_recording(pids) -> None:
        _wait_for(child_pid)  # the helper's own child runs
        raise KeyboardInterrupt

    monkeypatch.setattr(process, "own_processes", interrupted_while_recording)
    helper = ["sh", "-c", f'echo $$ > {tmp_path / "helper.pid"}; sleep 60 & echo $! > {child_pid}; wait']
    with pytest.raises(KeyboardInterrupt):
        process.run_group(helper, tmp_path / "helper.log", None, timeout=60)
    pids = [int((tmp_path / name).read_text()) for name in ("helper.pid", "child.pid")]
    left = [pid for pid in pids if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left


def _helper_and_child(marker: str, timeout: float = 10.0) -> list[int]:
    """[the helper, its own child]: the child is the descendant of this process that runs ``sleep <marker>``."""
    deadline = time.monotonic() + timeout
    while True:
        for proc in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if proc.cmdline() == ["sleep", marker]:
                    return [proc.ppid(), proc.pid]
        assert time.monotonic() < deadline, "the helper's own child never ran"
        time.sleep(0.01)


@pytest.fixture(params=["as this process", "as an unprivileged user"])
def cluster(request, tmp_path) -> Iterator[PgCluster]:
    """A PostgreSQL cluster (never created) whose helpers run as this process does or, when it is root, as an
    unprivileged user (in a home that user can enter)."""
    if request.param == "as this process":
        yield PgCluster(tmp_path, tmp_path, tmp_path / "data", {}, False, None, "bench")
        return
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    home = Path(tempfile.mkdtemp(prefix="pg-helper-"))
    home.chmod(0o755)
    try:
        yield PgCluster(home, home, home / "data", {}, False, pwd.getpwnam("nobody"), "bench")
    finally:
        shutil.rmtree(home)


def test_an_interrupt_while_a_cluster_helper_runs_ends_its_whole_group(cluster):
    """The helper (a shell, as the cluster's user) starts a child of its own, as initdb starts ``postgres --boot``
    and ``--single``; a Ctrl-C lands while it runs. Both are gone when the call raises."""
    marker = "61.5"
    found: list[int] = []

    def interrupt() -> None:
        found.extend(_helper_and_child(marker))
        time.sleep(0.1)  # the call is waiting for the helper by now, not still starting it
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        cluster._run_as_user(["sh", "-c", f"sleep {marker} & wait"])
    left = [pid for pid in found if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert len(found) == 2 and not left


def test_a_cluster_helper_is_recorded_and_hands_back_its_output(cluster, monkeypatch):
    """initdb's and ``postgres --single``'s input, output and exit code, as the cluster's user; the helper is in the
    run's ownership record while it runs."""
    recorded: list[int] = []
    monkeypatch.setattr(process, "own_processes", recorded.extend)
    done = cluster._run_as_user(["sh", "-c", "cat; id -u >&2; exit 3"], "ALTER ROLE tdebench;\n")
    uid = cluster.user.pw_uid if cluster.user is not None else os.getuid()
    assert (done.returncode, done.stdout, done.stderr) == (3, "ALTER ROLE tdebench;\n", f"{uid}\n")
    assert len(recorded) == 1


@pytest.fixture
def own_tmpdir(tmp_path, monkeypatch) -> Path:
    """A TMPDIR of the test's own, where the layout check makes its directory."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return root


def test_the_layout_check_leaves_no_directory_when_its_child_is_killed(own_tmpdir, monkeypatch):
    script = ("import os, signal, sys\n"
              "open(os.path.join(sys.argv[1], 'probe.db'), 'w').write('x')\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    monkeypatch.setattr(counters, "_PROBE", script)
    code, _ = counters._layout_check(timeout=30)
    assert code == -signal.SIGKILL
    assert not list(own_tmpdir.iterdir())


def test_the_layout_check_leaves_no_directory_or_child_when_interrupted(own_tmpdir, monkeypatch):
    pid_file = own_tmpdir.parent / "child.pid"
    script = ("import os, sys, time\n"
              "open(os.path.join(sys.argv[1], 'probe.db'), 'w').write('x')\n"
              f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
              "time.sleep(60)\n")
    monkeypatch.setattr(counters, "_PROBE", script)

    def interrupt() -> None:
        _wait_for(pid_file)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # a Ctrl-C (the CLI's SIGTERM: the same)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        counters._layout_check(timeout=30)
    assert not _running(int(pid_file.read_text()))
    assert not list(own_tmpdir.iterdir())


def test_the_layout_check_passes_here_and_cleans_up(own_tmpdir):
    assert counters._layout_check(timeout=60) == (0, "ok\n")
    assert not list(own_tmpdir.iterdir())
    assert os.environ["TMPDIR"] == str(own_tmpdir)


def test_the_layout_checks_directory_is_owned_by_the_run_before_it_exists(own_tmpdir):
    """A SIGKILL leaves it behind; the run's ownership record lists it first, so `tdebench cleanup` removes it."""
    told: list[tuple[str, Path, bool]] = []
    stop = process.watch(lambda event, subject: told.append((event, Path(subject), Path(subject).exists())))
    try:
        counters._layout_check(timeout=60)
    finally:
        stop()
    paths = [(p, existed) for event, p, existed in told if event == "path"]
    assert len(paths) == 1 and paths[0][0].parent == own_tmpdir and not paths[0][1]
    assert paths[0][0].name.startswith("tdebench-probe-")
