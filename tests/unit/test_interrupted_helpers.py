"""Helpers interrupted at any moment leave nothing running or on disk: a MariaDB helper's process group
(mariadb-install-db and the bootstrap server it starts) is ended and waited for even when the interrupt lands while
the run records it, and the SQLite layout check's ``tdebench-probe-*`` directory goes however its child ends."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest

from tdebench.engines.mariadb import support
from tdebench.engines.sqlite import counters


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

    monkeypatch.setattr(support, "own_processes", interrupted_while_recording)
    helper = ["sh", "-c", f'echo $$ > {tmp_path / "helper.pid"}; sleep 60 & echo $! > {child_pid}; wait']
    with pytest.raises(KeyboardInterrupt):
        support.run_group(helper, tmp_path / "helper.log", None, timeout=60)
    pids = [int((tmp_path / name).read_text()) for name in ("helper.pid", "child.pid")]
    left = [pid for pid in pids if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left


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
