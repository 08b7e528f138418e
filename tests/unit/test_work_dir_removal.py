"""The work directory's removal at a run's end (tdebench.runner.removal): a file that appears while the tree is
deleted (a process still exiting) does not leave the directory behind, and a directory that stays is said in one
line and keeps the run's ownership record for `tdebench cleanup`."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path

from tdebench.runner import cleanup, removal
from tdebench.runner.ownership import Ownership
from tests.unit.test_runner_fake import ENC, _fake, run  # noqa: F401 - the fixture registers the fake engine


def _work_dir(parent: Path) -> Path:
    work = parent / "tdebench-run-x"
    (work / "inst" / "data").mkdir(parents=True)
    for name in ("ibdata1", "server.log"):
        (work / "inst" / "data" / name).write_text("x")
    return work


def _late_file_on_first_rmdir(monkeypatch, matches) -> list[str]:
    """Make the first ``os.rmdir`` of a directory ``matches`` accepts find one more file in it, as a process that
    was still exiting would leave; returns the directories that got one."""
    real, hit = os.rmdir, []

    def rmdir(path, *args, **kwargs):
        if not hit and matches(Path(os.fspath(path))):
            hit.append(os.fspath(path))
            (Path(os.fspath(path)) / "late.log").write_text("written while the tree was being deleted")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir)
    return hit


def test_a_file_appearing_while_the_tree_is_deleted_does_not_leave_it(tmp_path, monkeypatch):
    work = _work_dir(tmp_path)
    hit = _late_file_on_first_rmdir(monkeypatch, lambda p: p == work)
    said: list[str] = []
    assert removal.remove_work_dir(work, said.append)
    assert hit == [str(work)] and not os.path.lexists(work) and not said


def test_a_directory_written_into_for_a_moment_is_removed(tmp_path):
    """A thread keeps creating files in the tree for 0.3 s (until its directory is gone)."""
    work = _work_dir(tmp_path)
    fd = os.open(work / "inst" / "data", os.O_RDONLY | os.O_DIRECTORY)
    stop = time.monotonic() + 0.3

    def write() -> None:
        n = 0
        while time.monotonic() < stop:
            try:
                os.close(os.open(f"f{n}", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
            except FileNotFoundError:  # its directory was deleted
                return
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert removal.remove_work_dir(work, lambda text: None)
    finally:
        writer.join()
        os.close(fd)
    assert not os.path.lexists(work)


def test_a_directory_that_stays_is_said_in_one_line_and_keeps_the_record(tmp_path, monkeypatch):
    work = _work_dir(tmp_path)
    owner = Ownership("t10stays", tmp_path / "run", keep=False, directory=tmp_path / "owned")
    owner.add_dir(work)
    real = os.rmdir

    def busy(path, *args, **kwargs):
        if Path(os.fspath(path)) == work:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", busy)
    said: list[str] = []
    started = time.monotonic()
    assert not removal.remove_work_dir(work, said.append, timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 2.0  # tried again, for a bounded time
    assert len(said) == 1 and "\n" not in said[0], said
    assert str(work) in said[0] and "busy" in said[0] and "`tdebench cleanup`" in said[0]
    owner.close()
    record = json.loads(owner.path.read_text())
    assert record["owner"]["exited"] and str(work) in record["dirs"]
    assert cleanup.leftovers(record).dirs == [str(work)]


def test_an_interrupted_run_removes_its_work_directory_despite_a_late_file(capfd, tmp_path, monkeypatch):
    """Without the clean-up at the process's exit (which would mend it), the run's own removal gets the work
    directory and its ownership record goes."""
    monkeypatch.setattr(cleanup, "clean_own_records", lambda directory=None: [])
    work_root = tmp_path / "work"
    hit = _late_file_on_first_rmdir(monkeypatch, lambda p: p.parent == work_root and p.name.startswith("tdebench-"))
    code, err, _ = run(capfd, tmp_path, "--trials", "2", "--workload-option", f"interrupt={ENC}@1")
    assert code == 130, err
    assert hit and not list(work_root.glob("tdebench-*")), "the interrupted run left its work directory"
    assert not list((tmp_path / "state").rglob("*.json")), "the ownership record was kept"


def test_a_directory_already_gone_counts_as_removed(tmp_path):
    started = time.monotonic()
    assert removal.remove_dir(tmp_path / "tdebench-gone", timeout=1.0) is None
    assert time.monotonic() - started < 0.5  # not tried again
