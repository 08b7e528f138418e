"""The process tree below a process, read from /proc: the kernel's per-thread children lists
(``/proc/<pid>/task/<tid>/children``, a few small reads), else one pass over every ``/proc/<pid>/stat``. psutil's
``children()`` reads the parent of every process on the machine each time: tens of milliseconds on a busy one,
where these read the tree's own files. Shared by the measurement probes and the servers' process trees."""

from __future__ import annotations

import os


def read_stat(pid: int) -> tuple[int, int, int, int] | None:
    """(ppid, start ticks, utime + stime, cutime + cstime) of ``pid``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            f = fh.read().rpartition(b")")[2].split()  # the command name may hold spaces and ')'
    except OSError:
        return None
    try:
        return int(f[1]), int(f[19]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])
    except (IndexError, ValueError):
        return None


def _children(pid: int) -> list[int] | None:
    """Child PIDs of ``pid`` from /proc/<pid>/task/*/children (None where the kernel does not offer it)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(x) for x in fh.read().split())
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread exited while we listed
            return None
        except (OSError, ValueError):
            continue
    return out


def descendants(roots: list[int]) -> list[int]:
    """``roots`` and every process below them (from the children lists, else one pass over /proc)."""
    found = descendants_or_none(roots)
    return found if found is not None else _descendants_by_scan(roots)


def descendants_or_none(roots: list[int]) -> list[int] | None:
    """``roots`` (those still there) and every process below them from the kernel's children lists; None when
    the kernel does not offer them."""
    seen: list[int] = []
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        kids = _children(pid)
        if kids is None:
            return None
        if os.path.exists(f"/proc/{pid}"):
            seen.append(pid)
        stack.extend(kids)
    return seen


def _descendants_by_scan(roots: list[int]) -> list[int]:
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return list(roots)
    for name in names:
        if not name.isdigit():
            continue
        stat = read_stat(int(name))
        if stat is not None:
            children.setdefault(stat[0], []).append(int(name))
    seen: list[int] = []
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.append(pid)
            stack.extend(children.get(pid, ()))
    return seen
