"""Templates of freshly bootstrapped data directories, so that a private server's first start copies one instead of
bootstrapping again.

``mariadb-install-db`` and ``initdb`` cost most of the CPU of creating a private instance (about three quarters of a
second each on a 2-core VM; ``benchmarks/bootstrap_templates.py`` measures it), and what they write depends only on
the server's binaries and the settings bootstrap reads. An engine asks :class:`Template` for a copy under a key of
those; on a miss it bootstraps as before, saves what bootstrap wrote, and every later instance with the same key
copies it. What is private to one instance (passwords, users, keys) is never in a template: the engine adds it to
the copy. Encrypted bootstraps (keys needed to write the files) are never templated.

Templates live in ``$TDEBENCH_TEMPLATE_DIR`` (default ``$XDG_CACHE_HOME/tdebench/templates``, i.e.
``~/.cache/tdebench/templates``), one 0700 directory per key; ``TDEBENCH_TEMPLATE_DIR=off`` bootstraps every
instance. A template is written into a partial directory and renamed into place, so a reader never sees half of
one, and instances made concurrently race harmlessly; the partial directory of a writer that was killed is removed
by the next one. Files are copied as the filesystem holds them: extents
allocated but never written (MariaDB's 512 MiB redo log, preallocated) are neither read nor stored, and are
allocated again in each copy, as bootstrap left them.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import pwd
import shutil
import stat
import tempfile
from pathlib import Path

from tdebench.engines.toolkit.extents import written_ranges

log = logging.getLogger(__name__)

ENV = "TDEBENCH_TEMPLATE_DIR"
FORMAT = 1  # bump when what a template holds changes
_OFF = ("off", "no", "0", "none")
_ALLOCATE = "allocate.json"  # files bootstrap preallocated beyond what it wrote
_CHUNK = 1 << 20


def template_root() -> Path | None:
    """Where templates live, or None when ``TDEBENCH_TEMPLATE_DIR=off``."""
    value = os.environ.get(ENV)
    if value is not None:
        return None if value.strip().lower() in _OFF else Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdebench" / "templates"


def binary_identity(path: Path) -> str:
    """A binary as installed (path, size, mtime): a package upgrade changes it."""
    real = Path(path).resolve()
    info = real.stat()
    return f"{real}:{info.st_size}:{info.st_mtime_ns}"


class Template:
    """The template of one kind of bootstrap (``kind``: e.g. ``mariadb``) for the inputs ``parts``."""

    def __init__(self, kind: str, parts: dict[str, object], root: Path | None = None) -> None:
        text = json.dumps({"format": FORMAT, "kind": kind, **parts}, sort_keys=True, default=str)
        self.key = f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:20]}"
        self.root = root if root is not None else template_root()

    @property
    def path(self) -> Path | None:
        return self.root / self.key if self.root is not None else None

    def restore(self, target: Path, owner: pwd.struct_passwd | None) -> bool:
        """Copy the template to the new directory ``target``, owned by ``owner``; False when there is none (or
        the copy failed: ``target`` is then removed, and the caller bootstraps)."""
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "a template is copied into a new directory", str(target))
        if self.path is None or not (self.path / _ALLOCATE).is_file():
            return False
        try:
            allocate = set(json.loads((self.path / _ALLOCATE).read_text()))
            copy_tree(self.path / "data", target, owner, allocate)
        except (OSError, ValueError) as exc:
            if getattr(exc, "errno", None) == errno.ENOSPC:
                raise
            log.warning("could not copy the bootstrap template %s (%s); bootstrapping instead", self.path, exc)
            shutil.rmtree(target, ignore_errors=True)
            return False
        return True

    def save(self, source: Path) -> None:
        """Keep a copy of the freshly bootstrapped ``source`` (nothing private to an instance in it yet). Never
        fails the caller: a template that cannot be written is only a slower next start."""
        if self.path is None or self.path.exists():
            return
        partial: Path | None = None
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _remove_abandoned(self.path.parent)
            partial = Path(tempfile.mkdtemp(prefix=f".partial-{os.getpid()}-", dir=self.path.parent))
            allocate = copy_tree(source, partial / "data", None, set())
            (partial / _ALLOCATE).write_text(json.dumps(sorted(allocate)))
            partial.rename(self.path)
            partial = None
        except OSError as exc:
            if not self.path.exists():  # another process saving the same template at once is fine
                log.warning("could not save the bootstrap template %s: %s", self.path, exc)
        finally:
            if partial is not None:
                shutil.rmtree(partial, ignore_errors=True)


def _remove_abandoned(root: Path) -> None:
    """Partial templates whose writer is gone (killed while saving one)."""
    for partial in root.glob(".partial-*-*"):
        try:
            os.kill(int(partial.name.split("-")[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(partial, ignore_errors=True)
        except (ValueError, PermissionError):
            continue


def copy_tree(source: Path, target: Path, owner: pwd.struct_passwd | None, allocate: set[str]) -> set[str]:
    """Copy the directory ``source`` to the new ``target`` with the same modes, owned by ``owner`` (None: by us),
    without reading extents that were allocated but never written; the files named in ``allocate`` (relative
    paths) are preallocated to their full size. Returns the files of ``source`` that were so preallocated."""
    preallocated: set[str] = set()
    for directory, dirs, files in os.walk(source):
        relative = os.path.relpath(directory, source)
        here = target / relative if relative != "." else target
        os.mkdir(here, stat.S_IMODE(os.stat(directory).st_mode))
        os.chmod(here, stat.S_IMODE(os.stat(directory).st_mode))
        _own(here, owner)
        for name in sorted(dirs):
            if os.path.islink(os.path.join(directory, name)):
                _copy_link(os.path.join(directory, name), here / name, owner)
        for name in sorted(files):
            path = os.path.join(directory, name)
            key = os.path.normpath(os.path.join(relative, name))
            if os.path.islink(path):
                _copy_link(path, here / name, owner)
            elif _copy_file(path, here / name, owner, key in allocate):
                preallocated.add(key)
    return preallocated


def _copy_file(source: str, target: Path, owner: pwd.struct_passwd | None, allocate: bool) -> bool:
    """Copy one file (its written extents; the rest stays a hole unless ``allocate``); True when ``source`` is
    preallocated beyond what it holds written."""
    with open(source, "rb") as src:
        info = os.fstat(src.fileno())
        ranges = written_ranges(src.fileno(), info.st_size)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(info.st_mode))
        try:
            if owner is not None:
                os.fchown(fd, owner.pw_uid, owner.pw_gid)
            os.fchmod(fd, stat.S_IMODE(info.st_mode))
            if ranges is None:
                _copy_nonzero(src.fileno(), fd, info.st_size)
            for start, end in ranges or ():
                _copy_range(src.fileno(), fd, start, end)
            os.ftruncate(fd, info.st_size)
            if allocate and info.st_size:
                os.posix_fallocate(fd, 0, info.st_size)
        finally:
            os.close(fd)
    written = sum(end - start for start, end in ranges) if ranges is not None else info.st_size
    return ranges is not None and written < info.st_size <= info.st_blocks * 512


def _copy_range(src: int, dst: int, start: int, end: int) -> None:
    """In the kernel where it can (``copy_file_range``); across filesystems (a template copied onto a loop-mounted
    image) through a buffer."""
    offset = start
    while offset < end:
        try:
            done = os.copy_file_range(src, dst, end - offset, offset, offset)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
            for chunk_start in range(offset, end, _CHUNK):
                os.pwrite(dst, os.pread(src, min(_CHUNK, end - chunk_start), chunk_start), chunk_start)
            return
        if done == 0:
            break
        offset += done


def _copy_nonzero(src: int, dst: int, size: int) -> None:
    """Without an extent map (tmpfs): every chunk that is not all zeros."""
    zeros = bytes(_CHUNK)
    for offset in range(0, size, _CHUNK):
        chunk = os.pread(src, _CHUNK, offset)
        if chunk != zeros[:len(chunk)]:
            os.pwrite(dst, chunk, offset)


def _copy_link(source: str, target: Path, owner: pwd.struct_passwd | None) -> None:
    os.symlink(os.readlink(source), target)
    if owner is not None:
        os.lchown(target, owner.pw_uid, owner.pw_gid)


def _own(path: Path, owner: pwd.struct_passwd | None) -> None:
    if owner is not None:
        os.chown(path, owner.pw_uid, owner.pw_gid)
