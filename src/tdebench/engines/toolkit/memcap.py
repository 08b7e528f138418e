"""A memory cgroup around a server's processes: bounds what the OS page cache can keep for it.

The kernel charges a page of the page cache to the cgroup of the process that read it in, and reclaims a cgroup's
cached pages first when the cgroup reaches its limit. A server whose processes sit in a cgroup limited to its own
cache + a small headroom therefore cannot keep the rest of its data in the OS page cache: a read its own cache
misses goes to the disk (or to the little page cache the headroom leaves). Anonymous and shared memory count
against the same limit, so the headroom must cover the server's private memory (sorts, hashes, connections) or
the kernel's OOM killer ends a server process.

cgroup v2 (``memory.max``) and the v1 memory controller (``memory.limit_in_bytes``) are supported; a child group
is created inside tdebench's own group. Only root can do this; :func:`unavailable` says why not otherwise.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

from tdebench.engines.toolkit import cgroupfs

ROOT = Path("/sys/fs/cgroup")


def _own_group(version: str) -> str:
    """tdebench's own cgroup path in hierarchy ``version`` ("2" or the v1 controller "memory")."""
    return cgroupfs.own_paths().get("" if version == "2" else version, "/")


@lru_cache(maxsize=1)
def _base() -> tuple[str, Path] | None:
    """(version, directory in which to create groups) of the first usable hierarchy, or None."""
    v1 = ROOT / "memory"
    if (v1 / "memory.limit_in_bytes").exists() or (v1 / "cgroup.procs").exists():
        return "1", v1 / _own_group("memory").lstrip("/")
    for unified in (ROOT, ROOT / "unified"):
        controllers = unified / "cgroup.controllers"
        if controllers.exists() and "memory" in controllers.read_text().split():
            return "2", unified / _own_group("2").lstrip("/")
    return None


@lru_cache(maxsize=1)
def unavailable() -> str:
    """"" when a memory cgroup can be made here; else why not."""
    base = _base()
    probe = (base[1] if base else ROOT) / f"tdebench-probe-{os.getpid()}"

    def make() -> str:
        probe.mkdir()
        limit = probe / ("memory.limit_in_bytes" if base and base[0] == "1" else "memory.max")
        if not limit.exists():
            return f"cgroup {probe.parent} does not delegate the memory controller"
        limit.write_text(str(1 << 30))
        return ""
    return cgroupfs.why_not("memory cgroup", base[1] if base else None,
                            "no cgroup memory controller is mounted under /sys/fs/cgroup", make, probe.rmdir)


class MemoryCap:
    """One cgroup with a memory limit; processes are added to it after they start (children follow)."""

    def __init__(self, name: str) -> None:
        base = _base()
        if base is None or unavailable():
            raise OSError(unavailable() or "no memory cgroup")
        self.version, parent = base
        self.path = parent / f"tdebench-{os.getpid()}-{name}"
        self.limit = 0

    def _file(self, v1: str, v2: str) -> Path:
        return self.path / (v1 if self.version == "1" else v2)

    def set_limit(self, limit_bytes: int) -> None:
        """Create the group if needed and set its limit (page cache above it is reclaimed at once)."""
        self.path.mkdir(exist_ok=True)
        if self.version == "1":
            try:  # pages a process touched before it joined move with it (deprecated in v1 but present)
                (self.path / "memory.move_charge_at_immigrate").write_text("3")
            except OSError:
                pass
        self._file("memory.limit_in_bytes", "memory.max").write_text(str(int(limit_bytes)))
        self.limit = int(limit_bytes)

    def add(self, pids: list[int]) -> int:
        """Move ``pids`` into the group; returns how many moved (vanished processes are skipped)."""
        moved = 0
        procs = self.path / "cgroup.procs"
        for pid in pids:
            try:
                procs.write_text(str(pid))
                moved += 1
            except OSError:
                continue
        return moved

    def adopt(self, list_pids: Callable[[], list[int]], rounds: int = 10) -> None:
        """Move a process tree into the group until none of it is left outside: a child forked while its
        parent was being moved keeps the parent's old group, so one pass over a listing can miss it."""
        for _ in range(rounds):
            stray = set(list_pids()) - set(self.members())
            if not stray:
                return
            self.add(sorted(stray))

    def members(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def page_cache_bytes(self) -> int | None:
        """File-backed (page cache) bytes charged to the group now, or None when unreadable."""
        try:
            stat = dict(line.split() for line in (self.path / "memory.stat").read_text().splitlines())
        except (OSError, ValueError):
            return None
        value = stat.get("cache" if self.version == "1" else "file")
        return int(value) if value is not None else None

    def oom_kills(self) -> int | None:
        """Processes of the group the kernel killed for reaching the limit (None when not reported)."""
        name = "memory.oom_control" if self.version == "1" else "memory.events"
        try:
            fields = dict(line.split() for line in (self.path / name).read_text().splitlines())
        except (OSError, ValueError):
            return None
        value = fields.get("oom_kill")
        return int(value) if value is not None else None

    def remove(self, wait: float = 5.0) -> None:
        """Remove the group once its processes are gone (they must have been stopped first)."""
        deadline = time.monotonic() + wait
        while self.path.exists():
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    return  # a leftover empty group is harmless; the next run's name differs
                time.sleep(0.1)


def evict_files(directory: Path) -> int:
    """Drop the OS page cache's clean pages of every file under ``directory`` (POSIX_FADV_DONTNEED), so that
    pages read in earlier by processes outside a cgroup cannot serve its server for free. Returns bytes of the
    files advised. Dirty pages stay until written back: call it with the server stopped (files flushed)."""
    total = 0
    for path in Path(directory).rglob("*"):
        try:
            if not path.is_file() or path.is_symlink():
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            total += os.fstat(fd).st_size
        except OSError:
            pass
        finally:
            os.close(fd)
    return total


def cache_files(directory: Path) -> int:
    """Read every file under ``directory`` once, so that the OS page cache holds them (``--page-source memory``):
    the first block's misses then come from memory as every later block's do. Returns the bytes read."""
    return sum(read_chunks(directory))


def read_chunks(directory: Path) -> Iterator[int]:
    """Read every file under ``directory`` once, in 1-MiB chunks and in name order, yielding each chunk's length
    (a file that cannot be read is passed over)."""
    for path in sorted(Path(directory).rglob("*")):
        try:
            if not path.is_file() or path.is_symlink():
                continue
            with open(path, "rb", buffering=0) as handle:
                while chunk := handle.read(1 << 20):
                    yield len(chunk)
        except OSError:
            continue
