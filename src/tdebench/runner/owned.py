"""Which directories and processes an ownership record may call ours, and where the records live.

Shared by the run that writes its record (:mod:`tdebench.runner.ownership`) and by ``tdebench cleanup``
(:mod:`tdebench.runner.cleanup`), which reads the records of runs that were killed. Only ``tdebench-*`` directories
are ever ours; a server is identified by PID *and* start time, so a recycled PID is never taken for one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import psutil

PREFIX = "tdebench-"
#: the environment variable every program a run starts inherits, holding its record's mark
MARK = "TDEBENCH_RUN_MARK"
# directories that are never removed, whatever a record says
_NEVER = {Path("/"), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path.home()}


def state_dir() -> Path:
    """``$XDG_STATE_HOME/tdebench/owned`` (``~/.local/state/tdebench/owned`` by default)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tdebench" / "owned"


def started_at(pid: int) -> float | None:
    """Start time of ``pid`` (seconds since the epoch), None if there is no such process."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def same_process(pid: int, started: float | None) -> bool:
    """True if ``pid`` is alive (not a zombie) and is the process that started at ``started`` (not a recycled PID)."""
    try:
        proc = psutil.Process(pid)
        now, zombie = proc.create_time(), proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
    return not zombie and (started is None or abs(now - started) < 1.0)


def temp_roots() -> list[Path]:
    """Where tdebench and the engines create temporary directories."""
    roots = [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")]
    return list(dict.fromkeys(r.resolve() for r in roots if r.is_dir()))


def removable(path: Path) -> bool:
    """Only ``tdebench-*`` directories (or paths inside one) may be deleted by cleanup."""
    path = Path(os.path.abspath(path))
    if path in _NEVER or len(path.parts) < 3:
        return False
    return any(part.startswith(PREFIX) for part in path.parts[1:])


_PROTECTED: set[Path] = set()  # the user's directories: never recorded as ours, whatever their names


def protect(path: Path) -> None:
    """Never record ``path`` or a directory above it as owned (a run directory, a --work-dir, TMPDIR)."""
    _PROTECTED.add(Path(os.path.abspath(path)))


def _holds_protected(directory: Path) -> bool:
    """True if deleting ``directory`` would delete TMPDIR, the current directory or a protected path."""
    protected = {*_PROTECTED, Path(os.path.abspath(tempfile.gettempdir())), Path(os.path.abspath(os.getcwd()))}
    return any(p == directory or directory in p.parents for p in protected)


def owned_dirs_in_argv(argv: list[str]) -> list[str]:
    """``tdebench-*`` directories directly under a temp root that a command line refers to
    (e.g. gocryptfs' ``-passfile /tmp/tdebench-secret-x/pass``, a relocated instance's my.cnf) -- never
    one that holds TMPDIR, the current directory or a protected path (``TMPDIR=/tmp/tdebench-probe/work``
    must not make ``/tmp/tdebench-probe`` ours)."""
    roots = temp_roots()
    found: list[str] = []
    for item in argv:
        text = item.split("=", 1)[1] if item.startswith("-") and "=" in item else item
        if not text.startswith("/"):
            continue
        path = Path(os.path.abspath(text))
        for root in roots:
            if root in path.parents:
                top = root / path.relative_to(root).parts[0]
                if top.name.startswith(PREFIX) and str(top) not in found and not _holds_protected(top):
                    found.append(str(top))
    return found


def socket_dirs(pids: list[int]) -> list[Path]:
    """``tdebench-*`` directories holding the Unix sockets ``pids`` listen on (short socket paths live in
    /tmp when the work directory is deep)."""
    found: list[Path] = []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            conns = psutil.Process(pid).net_connections(kind="unix")
        except psutil.Error:
            continue
        for conn in conns:
            parent = Path(conn.laddr).parent if isinstance(conn.laddr, str) and conn.laddr.startswith("/") else None
            if parent is not None and removable(parent) and parent not in found:
                found.append(parent)
    return found


def read_records(directory: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """Every ownership record (unreadable ones skipped)."""
    folder = directory or state_dir()
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            records.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return records


def owner_alive(record: dict[str, Any]) -> bool:
    """True while the tdebench process that wrote ``record`` runs (and has not finished)."""
    owner = record.get("owner", {})
    return not owner.get("exited") and same_process(int(owner.get("pid", 0)), owner.get("started"))
