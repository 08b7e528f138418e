"""Settings of the ``galera`` engine: the cluster's own keys (``nodes``, ``ports``, ``gcache_size``), the wsrep
options every node gets, and the loopback ports of one node.

The cluster's keys travel as engine settings (``--nodes N`` is ``nodes=N``); the rest are MariaDB server
settings, validated as the ``mariadb`` engine validates them, plus the wsrep options that tdebench manages.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from tdebench.engines.mariadb import settings as ms
from tdebench.engines.toolkit.process import free_port
from tdebench.errors import EnvironmentProblem, UsageError

PROVIDER = Path("/usr/lib/galera/libgalera_smm.so")
PROVIDER_DIRS = (Path("/usr/lib/galera"), Path("/usr/lib/galera4"), Path("/usr/lib64/galera-4"),
                 Path("/usr/lib64/galera"), Path("/usr/lib/x86_64-linux-gnu/galera"))
PACKAGE = "galera-4"
PROVIDER_ENV = "TDEBENCH_GALERA_PROVIDER"
DEFAULT_NODES = 3
MAX_NODES = 9
PORTS_PER_NODE = 4  # mysqld, galera group communication, IST receiver, SST receiver

#: the cluster's own keys (not server variables) and their defaults
OWN: dict[str, str] = {"nodes": str(DEFAULT_NODES), "ports": "auto", "gcache_size": "64M", "sst": "rsync",
                       "transport": "plain"}
#: the replication transport between the nodes: plain TCP, or the provider's TLS (galera_tls.py)
TRANSPORTS = ("plain", "tls")
#: state transfer methods: rsync copies the donor's files; mariabackup streams a backup (socat), then prepares it
SST_METHODS = ("rsync", "mariabackup")
#: server defaults of a cluster node: the mariadb engine's, smaller (N nodes per twin share one machine)
NODE_DEFAULTS: dict[str, str] = {**ms.DEFAULTS, "innodb_buffer_pool_size": "256M", "innodb_log_file_size": "128M",
                                 "max_connections": "100"}
_RESERVED = ("wsrep", "binlog_format", "innodb_autoinc_lock_mode", "default_storage_engine")
_SIZE = re.compile(r"^[1-9][0-9]*[KMG]?$", re.I)


def node_count(settings: dict[str, str]) -> int:
    """The ``nodes`` setting as a count of 2..MAX_NODES; UsageError otherwise."""
    raw = str(settings.get("nodes", DEFAULT_NODES)).strip()
    if not raw.isdigit():
        raise UsageError(f"bad node count '{raw}'", f"give --nodes a whole number from 2 to {MAX_NODES}, e.g. --nodes 3")
    count = int(raw)
    if count < 2:
        raise UsageError(f"--nodes {count} is no cluster", f"give --nodes 2 to {MAX_NODES} (default {DEFAULT_NODES}); "
                         "one server alone is --engine mariadb")
    if count > MAX_NODES:
        raise UsageError(f"--nodes {count} is more than {MAX_NODES} nodes on one machine",
                         f"give --nodes 2 to {MAX_NODES}")
    return count


def port_range(settings: dict[str, str]) -> tuple[int, int] | None:
    """``ports=FIRST-LAST`` as a range (None for ``auto``: free ports picked at start)."""
    raw = str(settings.get("ports", "auto")).strip().lower()
    if raw == "auto":
        return None
    match = re.fullmatch(r"(\d+)-(\d+)", raw)
    if not match or not 1024 <= int(match.group(1)) <= int(match.group(2)) <= 65535:
        raise UsageError(f"bad port range '{raw}'", "give ports=FIRST-LAST within 1024-65535, e.g. ports=24000-24099, "
                         "or ports=auto")
    return int(match.group(1)), int(match.group(2))


def validate(settings: dict[str, str]) -> None:
    """UsageError for a bad cluster key or a reserved wsrep option; EnvironmentProblem for a port range with too
    few free ports (checked before any work)."""
    count = node_count(settings)
    if not _SIZE.match(str(settings.get("gcache_size", OWN["gcache_size"])).strip()):
        raise UsageError(f"bad gcache_size '{settings.get('gcache_size')}'", "give a size such as 64M or 1G")
    sst = str(settings.get("sst", OWN["sst"])).strip().lower()
    if sst not in SST_METHODS:
        raise UsageError(f"unknown state transfer method '{sst}'", f"give sst={' or sst='.join(SST_METHODS)}")
    transport = str(settings.get("transport", OWN["transport"])).strip().lower()
    if transport not in TRANSPORTS:
        raise UsageError(f"unknown replication transport '{transport}'", "give transport=plain (default) or "
                         "transport=tls (the provider's TLS between the nodes)")
    server = server_settings(settings)
    for key in server:
        if key.startswith(_RESERVED):
            raise UsageError(f"galera setting '{key}' is managed by tdebench (the cluster's wiring)",
                             "leave it out; --nodes, ports=FIRST-LAST and gcache_size=SIZE shape the cluster")
    ms.validate_settings(server)
    span = port_range(settings)
    if span is not None:
        free = free_in(span)
        need = PORTS_PER_NODE * count
        if len(free) < need:
            raise EnvironmentProblem(f"ports {span[0]}-{span[1]} on 127.0.0.1 have {len(free)} free, a {count}-node "
                                     f"cluster needs {need}", "give another range with --server-setting "
                                     "ports=FIRST-LAST, or ports=auto")


def server_settings(settings: dict[str, str]) -> dict[str, str]:
    """The settings that are MariaDB server variables (the cluster's own keys left out)."""
    return {ms.normalize_key(k): str(v) for k, v in settings.items() if ms.normalize_key(k) not in OWN}


def node_options(settings: dict[str, str]) -> dict[str, str]:
    """Server options of every node: :data:`NODE_DEFAULTS` overridden by the user's server settings."""
    return {**NODE_DEFAULTS, **server_settings(settings)}


def in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def free_in(span: tuple[int, int]) -> list[int]:
    return [p for p in range(span[0], span[1] + 1) if not in_use(p)]


@dataclass(frozen=True)
class NodePorts:
    """The loopback ports of one node."""

    mysql: int
    galera: int
    ist: int
    sst: int


def allocate(count: int, span: tuple[int, int] | None) -> list[NodePorts]:
    """Ports for ``count`` nodes: free ports of the range, or free ports the kernel hands out."""
    need = PORTS_PER_NODE * count
    if span is None:
        ports: list[int] = []
        while len(ports) < need:
            port = free_port()
            if port not in ports:
                ports.append(port)
    else:
        ports = free_in(span)[:need]
        if len(ports) < need:
            raise EnvironmentProblem(f"ports {span[0]}-{span[1]} on 127.0.0.1 have {len(ports)} free, a {count}-node "
                                     f"cluster needs {need}", "give another range with ports=FIRST-LAST")
    return [NodePorts(*ports[i:i + PORTS_PER_NODE]) for i in range(0, need, PORTS_PER_NODE)]


def find_provider() -> Path:
    """The galera-4 provider library (``TDEBENCH_GALERA_PROVIDER`` names one elsewhere); EnvironmentProblem naming
    the Debian package otherwise."""
    chosen = os.environ.get(PROVIDER_ENV)
    if chosen:
        if Path(chosen).is_file():
            return Path(chosen)
        raise EnvironmentProblem(f"the Galera provider library {chosen} ({PROVIDER_ENV}) does not exist",
                                 f"install the Debian package {PACKAGE} (apt-get install {PACKAGE}) or correct "
                                 f"{PROVIDER_ENV}")
    for directory in PROVIDER_DIRS:
        candidate = directory / "libgalera_smm.so"
        if candidate.is_file():
            return candidate
    raise EnvironmentProblem(f"the Galera provider library libgalera_smm.so is missing (looked in {PROVIDER_DIRS[0]})",
                             f"install the Debian package {PACKAGE} (apt-get install {PACKAGE})")


def cluster_name(label: str) -> str:
    """``tdebench-<label>``, shortened to the 32 characters gcomm carries in its handshake (a longer group name
    makes every joiner fail: "handling gmcast protocol message failed ... String()")."""
    name = f"tdebench-{label}"
    if len(name) <= 32:
        return name
    return f"tdebench-{label[:14]}-{hashlib.sha256(label.encode()).hexdigest()[:8]}"


def wsrep_lines(provider: Path, cluster: str, me: int, nodes: list[NodePorts], gcache_size: str,
                sst: str = "rsync", sst_user: str = "", tls: list[str] | None = None) -> list[str]:
    """The wsrep options of node ``me`` (0-based) of a loopback cluster; mariabackup SST connects to the donor
    as the OS user ``sst_user`` through the socket (unix_socket authentication: no password anywhere); ``tls``:
    the provider's TLS options (``socket.ssl=YES;...``), None for plain TCP."""
    mine = nodes[me]
    peers = ",".join(f"127.0.0.1:{n.galera}" for n in nodes)
    scheme, ist = ("ssl", "ssl://") if tls else ("tcp", "")
    provider_options = ";".join([f"gmcast.listen_addr={scheme}://127.0.0.1:{mine.galera}",
                                 f"ist.recv_addr={ist}127.0.0.1:{mine.ist}", f"gcache.size={gcache_size}",
                                 "pc.wait_prim_timeout=PT60S", *(tls or [])])
    return ["wsrep_on=ON", f"wsrep_provider={provider}", f"wsrep_cluster_name={cluster}",
            f"wsrep_cluster_address=gcomm://{peers}", f"wsrep_node_name=node{me + 1}",
            f"wsrep_node_address=127.0.0.1:{mine.galera}", f"wsrep_node_incoming_address=127.0.0.1:{mine.mysql}",
            f"wsrep_sst_method={sst}", f"wsrep_sst_receive_address=127.0.0.1:{mine.sst}",
            *([f"wsrep_sst_auth={sst_user}:"] if sst == "mariabackup" else []),
            f'wsrep_provider_options="{provider_options}"',
            "binlog_format=ROW", "default_storage_engine=InnoDB", "innodb_autoinc_lock_mode=2"]
