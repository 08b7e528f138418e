"""ServerProcess (engines/toolkit/process.py): a server started with ``huge_pages=False`` runs with transparent
huge pages off (the gocryptfs daemon in a memory cgroup); by default the kernel's setting is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tdebench.engines.toolkit.process import ServerProcess


def _name(pid: int) -> str:
    return Path(f"/proc/{pid}/status").read_text().splitlines()[0].split()[1]


def _thp_enabled(pid: int) -> str | None:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("THP_enabled:"):
            return line.split()[1]
    return None


@pytest.mark.parametrize("huge_pages, expected", [(True, "1"), (False, "0")])
def test_huge_pages_off_reaches_the_server(tmp_path, huge_pages, expected):
    server = ServerProcess("sleep", ["sleep", "30"], tmp_path / "log", tmp_path / "pid", huge_pages=huge_pages)
    # Popen returns when exec has begun; the command's name is set a moment later
    server.start(lambda: server.pid is not None and _name(server.pid) == "sleep", timeout=10)
    try:
        assert server.pid is not None
        if _thp_enabled(server.pid) is None:
            pytest.skip("this kernel does not show THP_enabled in /proc/PID/status")
        assert _thp_enabled(server.pid) == expected
    finally:
        server.stop()


def test_tree_pids_finds_children_and_grandchildren(tmp_path):
    """The server and every descendant, from the kernel's per-thread children lists (and from psutil's walk,
    where a kernel has none): a shell's two background children and their own child."""
    import time

    import psutil

    from tdebench import proctree

    script = "sleep 30 & (sleep 30 & wait) & wait"
    server = ServerProcess("sh", ["sh", "-c", script], tmp_path / "log", tmp_path / "pid")
    server.start(lambda: len(psutil.Process(server.pid).children(recursive=True)) >= 3, timeout=10)
    try:
        time.sleep(0.2)
        expected = {server.pid, *(c.pid for c in psutil.Process(server.pid).children(recursive=True))}
        assert len(expected) == 4
        assert set(server.tree_pids()) == expected
        assert set(proctree._descendants_by_scan([server.pid])) == expected
    finally:
        server.kill()
    assert server.tree_pids() == []
