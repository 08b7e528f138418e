"""Bootstrap templates (tdebench.engines.toolkit.templates): where they live, their keys, and copies that keep the
files' modes, contents and preallocation without storing what was never written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tdebench.engines.toolkit import templates
from tdebench.engines.toolkit.extents import written_ranges
from tdebench.engines.toolkit.process import service_user
from tdebench.engines.toolkit.templates import Template, copy_tree, template_root

MIB = 1 << 20


def _bootstrapped(root: Path) -> Path:
    """A directory like a fresh data directory: a preallocated log with its head written, a small file, a
    subdirectory with a 0600 file and a symbolic link."""
    data = root / "data"
    (data / "mysql").mkdir(parents=True, mode=0o700)
    os.chmod(data, 0o750)
    with open(data / "ib_logfile0", "wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, 8 * MIB)
        handle.write(b"header" * 100)
    (data / "mysql" / "user.frm").write_bytes(bytes(range(256)) * 16)
    os.chmod(data / "mysql" / "user.frm", 0o600)
    (data / "link").symlink_to("mysql/user.frm")
    return data


def _written(path: Path) -> int:
    with open(path, "rb") as handle:
        ranges = written_ranges(handle.fileno(), path.stat().st_size)
    if ranges is None:
        pytest.skip("this filesystem has no extent map (FIEMAP)")
    return sum(end - start for start, end in ranges)


def test_root_from_the_environment_or_the_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv(templates.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert template_root() == tmp_path / "tdebench" / "templates"
    monkeypatch.setenv(templates.ENV, str(tmp_path / "elsewhere"))
    assert template_root() == tmp_path / "elsewhere"
    monkeypatch.setenv(templates.ENV, "off")
    assert template_root() is None
    assert not Template("mariadb", {"a": 1}).restore(tmp_path / "new", None)


def test_key_follows_every_part(tmp_path):
    one = Template("mariadb", {"settings": ["a=1"], "user": "x"}, tmp_path)
    assert one.key == Template("mariadb", {"user": "x", "settings": ["a=1"]}, tmp_path).key
    assert one.key != Template("mariadb", {"settings": ["a=2"], "user": "x"}, tmp_path).key
    assert one.key != Template("postgres", {"settings": ["a=1"], "user": "x"}, tmp_path).key
    assert one.key.startswith("mariadb-")


def test_save_then_restore_keeps_contents_modes_and_preallocation(tmp_path):
    source = _bootstrapped(tmp_path / "first")
    template = Template("mariadb", {"v": 1}, tmp_path / "templates")
    assert not template.restore(tmp_path / "none", None)
    template.save(source)
    stored = template.path / "data"
    log = stored / "ib_logfile0"
    assert log.stat().st_size == 8 * MIB and log.stat().st_blocks * 512 < MIB  # the unwritten extents not stored
    assert stat.S_IMODE(template.path.stat().st_mode) == 0o700

    target = tmp_path / "second" / "data"
    target.parent.mkdir()
    assert template.restore(target, None)
    for name in ("ib_logfile0", "mysql/user.frm"):
        assert (target / name).read_bytes() == (source / name).read_bytes(), name
        assert (target / name).stat().st_mode == (source / name).stat().st_mode, name
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert os.readlink(target / "link") == "mysql/user.frm"
    copied = target / "ib_logfile0"
    assert copied.stat().st_blocks * 512 >= 8 * MIB  # preallocated again, as bootstrap left it
    assert _written(copied) < MIB


def test_restore_refuses_an_existing_directory_and_save_never_fails(tmp_path):
    source = _bootstrapped(tmp_path / "first")
    template = Template("postgres", {"v": 1}, tmp_path / "templates")
    template.save(source)
    template.save(source)  # already there: nothing happens
    assert [p.name for p in (tmp_path / "templates").iterdir()] == [template.key]
    with pytest.raises(FileExistsError):
        template.restore(source, None)
    (tmp_path / "blocked").write_text("a file where the template directory would go")
    Template("postgres", {"v": 1}, tmp_path / "blocked").save(source)  # a warning, no error


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root")
def test_copy_is_owned_by_the_given_user(tmp_path):
    user = service_user()
    source = _bootstrapped(tmp_path / "first")
    copy_tree(source, tmp_path / "copy", user, set())
    owners = {(p.lstat().st_uid, p.lstat().st_gid) for p in [tmp_path / "copy", *(tmp_path / "copy").rglob("*")]}
    assert owners == {(user.pw_uid, user.pw_gid)}


def test_copy_onto_another_filesystem(tmp_path):
    """A template copied onto another filesystem (an instance on a loop-mounted image) goes through a buffer:
    ``copy_file_range`` refuses to cross filesystems."""
    import shutil
    import tempfile

    if not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second filesystem at /dev/shm")
    source = _bootstrapped(tmp_path / "first")
    other = Path(tempfile.mkdtemp(prefix="tdebench-test-templates-", dir="/dev/shm"))
    try:
        copy_tree(source, other / "data", None, {"ib_logfile0"})
        assert (other / "data" / "ib_logfile0").read_bytes() == (source / "ib_logfile0").read_bytes()
        assert (other / "data" / "mysql" / "user.frm").read_bytes() == (source / "mysql" / "user.frm").read_bytes()
    finally:
        shutil.rmtree(other)


def test_a_partial_template_of_a_killed_writer_is_removed(tmp_path):
    import subprocess

    root = tmp_path / "templates"
    gone = subprocess.Popen(["true"])
    gone.wait()
    abandoned, alive = root / f".partial-{gone.pid}-x1", root / f".partial-{os.getpid()}-x2"
    for partial in (abandoned, alive):
        (partial / "data").mkdir(parents=True)
    Template("mariadb", {"v": 1}, root).save(_bootstrapped(tmp_path / "first"))
    assert not abandoned.exists() and alive.exists()
