"""Exposure: every server tdebench provisions listens on a Unix socket only, or with --tcp on 127.0.0.1 only.

The listening sockets of the server processes are read from /proc (``/proc/<pid>/net/{tcp,tcp6,udp,udp6,unix}``
matched with the socket inodes in ``/proc/<pid>/fd``): during the runs of test_security.py (MariaDB without
--tcp, PostgreSQL with --tcp; the test is there, on the worker that holds those runs), and for the other
combination here, by starting an instance directly.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e.test_security import ENGINES, LOOPBACK, listening_sockets

pytestmark = [
    pytest.mark.server,
    pytest.mark.slow(seconds=30),  # two instances started and stopped, loaded machine
]


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
