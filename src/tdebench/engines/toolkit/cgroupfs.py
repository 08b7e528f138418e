"""What tdebench's cgroups share, whichever controllers they use (a server's memory cap, a duet twin's CPUs and
I/O): tdebench's own group in each hierarchy, and whether a group can be made here at all."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path


def own_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> tdebench's own cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            out.setdefault(name, path)
    return out


def why_not(kind: str, where: Path | None, missing: str, probe: Callable[[], str],
            release: Callable[[], object]) -> str:
    """"" when a ``kind`` can be made under ``where``; else why not: not root, ``missing`` when ``where`` is None, or
    what ``probe`` (which makes one group and sets it up) returned or raised. ``release`` then removes the group."""
    if os.geteuid() != 0:
        return f"only root can create {kind}s"
    if where is None:
        return missing
    try:
        return probe()
    except OSError as exc:
        return f"cannot create a {kind} under {where} ({exc.strerror or exc})"
    finally:
        with contextlib.suppress(OSError):
            release()
