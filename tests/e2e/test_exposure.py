"""Exposure: every server tdebench provisions listens on a Unix socket only, or with --tcp on 127.0.0.1 only.

The listening sockets of the server processes are read from /proc (``/proc/<pid>/net/{tcp,tcp6,udp,udp6,unix}``
matched with the socket inodes in ``/proc/<pid>/fd``): during the runs of test_security.py (MariaDB without
--tcp, PostgreSQL with --tcp), and for the other combination by starting an instance directly.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e.test_security import ENGINES, listening_sockets, observed_run

pytestmark = [
    pytest.mark.server,
    pytest.mark.slow(seconds=150),  # a measured run of the whole module, loaded machine
]
LOOPBACK = {"127.0.0.1"}
SERVER_NAMES = ("mariadbd", "mysqld", "postgres", "gocryptfs")


def _servers(seen) -> list[int]:
    return [pid for pid, name in seen.names.items() if name.startswith(SERVER_NAMES)]


@pytest.mark.parametrize("name, tcp", [("mariadb", False), ("postgres", True)])
def test_servers_of_a_run_listen_only_locally(name, tcp, tpch_sf001):
    seen = observed_run(name, Path(tpch_sf001[0]).parent)
    assert seen.code == 0, seen.stderr[-2000:]
    servers = _servers(seen)
    assert servers, f"no server process seen during the {name} run"
    database = [p for p in servers if not seen.names[p].startswith("gocryptfs")]
    for pid in servers:
        for proto, ip, port in seen.listening.get(pid, []):
            assert ip in LOOPBACK, f"{seen.names[pid]} (pid {pid}) listens on {proto} {ip}:{port}"
            assert tcp or not proto.startswith("tcp"), f"{seen.names[pid]} listens on {ip}:{port} without --tcp"
    if tcp:
        assert any(seen.listening.get(p) for p in database), "--tcp given but no server listened on 127.0.0.1"
    # Sampling a whole run under load can miss the moment the socket exists; that every instance listens on a
    # Unix socket is asserted deterministically in test_instances_listen_only_locally below.
    sockets = {path for p in database for path in seen.unix.get(p, set()) if path.startswith("/")}
    if not sockets:
        return
    assert sockets and sockets <= set(seen.unix_modes), "socket permissions were not seen"
    for path in sockets:  # other local users cannot reach the server through its socket either
        _, directory = seen.unix_modes[path]
        assert directory & 0o077 == 0, f"{path} lives in a directory with mode {directory:o}"


def _start_instance(engine_name: str, spec: str, tcp: bool, workdir: Path):
    from tdebench.encryption import parse_spec
    from tdebench.engines import get_engine
    from tdebench.api.engine import Config

    engine = get_engine(engine_name)
    config = Config(engine_name, parse_spec(spec), engine.default_settings(), tcp=tcp)
    instance = engine.create_instance(config, workdir)
    instance.start()
    return instance


@pytest.mark.parametrize("engine_name, spec, tcp", [
    ("mariadb", "none", True),
    ("postgres", "fs:gocryptfs", False),
])
def test_instances_listen_only_locally(engine_name, spec, tcp):
    """The combinations the runs above do not cover, on a freshly started instance."""
    _, missing = ENGINES[engine_name]
    if missing:
        pytest.skip(missing)
    workdir = Path(tempfile.mkdtemp(prefix="t10-exposure-"))
    workdir.chmod(0o755)
    instance = None
    try:
        instance = _start_instance(engine_name, spec, tcp, workdir)
        pids = instance.server_pids()
        assert pids
        inet = [s for pid in pids for s in listening_sockets(pid)[0]]
        unix = set().union(*(listening_sockets(pid)[1] for pid in pids))
        assert all(ip in LOOPBACK for _, ip, _ in inet), inet
        tcp_listeners = [s for s in inet if s[0].startswith("tcp")]
        assert bool(tcp_listeners) == tcp, f"TCP listeners {tcp_listeners} with tcp={tcp}"
        assert unix, "no Unix socket"
    finally:
        if instance is not None:
            instance.destroy()
        shutil.rmtree(workdir, ignore_errors=True)
