"""Galera clusters of MariaDB servers as the ``galera`` engine: N private nodes on loopback, one unit.

A mode of the mariadb package (docs/engines/galera.md says why): every node is a
:class:`~tdebench.engines.mariadb.engine.MariadbInstance` with the galera-4 provider and its own ports; the
cluster instance is node 1 (the workload connects to it) and owns the other nodes. Twins differ only in
encryption: every node of a ``tde:`` twin encrypts as the mariadb engine's spec says, with the same keys
(a state transfer copies encrypted files).

Layout under ``<workdir>/<label>`` (0700): ``node1/`` ... ``nodeN/``, each a mariadb instance directory
(``data/`` with ``galera.cache`` and ``grastate.dat``, ``tmp/``, ``keys/``, ``my.cnf``, ``server.log``).
Node 1 bootstraps (``--wsrep-new-cluster``); the others join by rsync SST, run as the unprivileged service user.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.engine import DEFAULT_DATABASE, Config
from tdebench.api.footprint import MIB, Footprint, size_setting
from tdebench.encryption import EncryptionSpec
from tdebench.api.keys import KeyAccess
from tdebench.engines.mariadb import galera_settings as gs
from tdebench.engines.mariadb import keyplugins
from tdebench.engines.mariadb.counters import buffer_pool_bytes
from tdebench.engines.mariadb.engine import MariadbEngine, MariadbInstance
from tdebench.engines.mariadb.galera_rejoin import SYNC_TIMEOUT, GaleraRejoin, wait_synced
from tdebench.engines.mariadb.galera_status import GaleraFacts, GaleraThreats
from tdebench.engines.mariadb.galera_tls import provider_options
from tdebench.engines.mariadb.switch import GaleraSwitcher
from tdebench.engines.toolkit.tls import TlsFiles, make_tls, remove_tls
from tdebench.engines.mariadb.memory import BufferPoolSize, use_buffered_reads
from tdebench.engines.mariadb.support import traversable_by
from tdebench.engines.toolkit import fsencrypt
from tdebench.engines.toolkit.process import own_path
from tdebench.errors import EnvironmentProblem, UsageError


class GaleraEngine(MariadbEngine):
    """Clusters of private MariaDB nodes replicating through the galera-4 provider."""

    name = "galera"
    description = ("Galera cluster of N private MariaDB nodes on loopback (galera-4 provider), plain or with "
                   "MariaDB data-at-rest encryption on every node")
    cache_type = BufferPoolSize  # a cluster restart rebuilds the joiners' state: no cache survives as it was
    # TDE online from nodes started with the key plugin loaded; copying a node's datadir into an fs: layer is not
    # tried on a cluster yet
    switcher_types = (GaleraSwitcher,)
    cluster_type = GaleraRejoin  # what GaleraCluster.cluster() returns: --fault kill-node, --nodes

    def supported_specs(self) -> list[EncryptionSpec]:
        """MariaDB's, without gocryptfs (a node's datadir in a FUSE mount is not tried with SST yet)."""
        return [s for s in super().supported_specs() if not fsencrypt.is_fs_spec(s)]

    def check_available(self) -> None:
        super().check_available()
        gs.find_provider()
        if shutil.which("rsync") is None:
            raise EnvironmentProblem("rsync is missing (joining nodes receive their state by rsync SST)",
                                     "install the Debian package rsync")

    def version(self) -> str:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", gs.PACKAGE], capture_output=True, text=True,
                             check=False, timeout=30)
        galera = out.stdout.strip() or "version unknown"
        return f"{super().version()} + {gs.PACKAGE} {galera}"

    def variant(self, settings: dict[str, str]) -> str:
        """``tls`` for clusters whose nodes replicate over TLS (``transport=tls``): their labels say so."""
        return "tls" if str(settings.get("transport", "plain")).strip().lower() == "tls" else ""

    def check_fault(self, kind: str, node: int | None, config: Config) -> None:
        """``kill-node``: a node 2..N of a cluster that keeps its quorum without it (3 nodes or more)."""
        nodes = gs.node_count({**gs.OWN, **config.settings})
        if nodes < 3:
            raise UsageError(f"--fault {kind}: a node killed out of {nodes} leaves '{config.label}' without a quorum "
                             "(the other node turns non-Primary and refuses every statement until it is back)",
                             "give --nodes 3 or more")
        if node is not None and not 2 <= node <= nodes:
            raise UsageError(f"--fault node={node}: '{config.label}' has nodes 1 to {nodes} and node 1 serves the "
                             "workload", f"give node=2 to {nodes}, or leave node= out (the last node)")

    def default_settings(self) -> dict[str, str]:
        return {**gs.NODE_DEFAULTS, **gs.OWN}

    def validate_settings(self, settings: dict[str, str]) -> None:
        gs.validate(settings)

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "GaleraCluster":
        self.validate_spec(config.spec)
        self.validate_settings(config.settings)
        return GaleraCluster(config, workdir, self, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        one = super().disk_footprint(spec, gs.node_options(settings))
        nodes = gs.node_count({**gs.OWN, **settings})
        gcache = size_setting(settings.get("gcache_size", gs.OWN["gcache_size"]), 1, 64 * MIB)
        return Footprint(peak=one.peak * nodes, final=one.final * nodes, fixed=(one.fixed + gcache) * nodes)


class GaleraNode(MariadbInstance):
    """One node: a mariadb instance in ``<cluster>/node<k>`` with the cluster's password, keys and wsrep options."""

    templated = False  # bootstrap reads the wsrep settings; node 1 runs mariadb-install-db (MariadbBootstrap)

    def __init__(self, config: Config, workdir: Path, engine: GaleraEngine, database: str, index: int,
                 ports: list[gs.NodePorts]) -> None:
        super().__init__(config, workdir, engine, database)
        self.options, self.key_settings = keyplugins.split_settings(gs.node_options(config.settings))
        self.index = index
        self.ports = ports
        self._port = ports[index].mysql
        self.provider = gs.find_provider()
        self.gcache_size = str(config.settings.get("gcache_size", gs.OWN["gcache_size"]))
        self.bootstrap = index == 0
        self.start_position = ""  # after a crash: the position --wsrep-recover found (see galera_rejoin)
        self.sst = str(config.settings.get("sst", gs.OWN["sst"])).strip().lower()
        self.transport = str(config.settings.get("transport", gs.OWN["transport"])).strip().lower()
        self.tls: TlsFiles | None = None  # transport=tls: the cluster's certificates (made at the first start)

    @property
    def node_name(self) -> str:
        return f"node{self.index + 1}"

    def place(self, cluster_root: Path) -> None:
        self.link = cluster_root / self.node_name

    def share(self, first: "GaleraNode") -> None:
        """A joiner gets node 1's password and keys: the state transfer brings node 1's users and files."""
        self._password = first._password
        self._keys = first._keys
        if first.key_access is not None:
            MariadbInstance.take_keys(self, first.key_access)

    def _make_root(self) -> Path:
        self.link.mkdir(mode=0o700)
        return self.link

    def _render_cnf(self) -> str:
        cluster = gs.cluster_name(self.config.label)
        return super()._render_cnf() + "\n".join(
            gs.wsrep_lines(self.provider, cluster, self.index, self.ports, self.gcache_size, self.sst,
                           self.os_user, provider_options(self.tls) if self.tls else None)) + "\n" + self._sst_tls()

    def _sst_tls(self) -> str:
        """transport=tls with mariabackup SST: the stream over TLS too (socat with OpenSSL, ``encrypt=3``: this
        cluster's certificate, the peer verified against its CA). rsync SST would need stunnel: left in clear."""
        if self.tls is None or self.sst != "mariabackup":
            return ""
        return (f"[sst]\nencrypt=3\ntca={self.tls.ca}\ntcert={self.tls.cert}\ntkey={self.tls.key}\n")

    @property
    def os_user(self) -> str:
        """The OS user the servers run as (mariabackup SST connects as it, through the socket)."""
        return self.user.pw_name if self.user is not None else pwd.getpwuid(os.geteuid()).pw_name

    def _extra_install_sql(self) -> str:
        if self.sst != "mariabackup":
            return ""
        priv = '{"access":18446744073709551615,"plugin":"unix_socket"}'
        return f"REPLACE INTO mysql.global_priv (Host, User, Priv) VALUES ('localhost', '{self.os_user}', '{priv}');\n"

    def _install(self) -> None:
        if self.bootstrap:
            super()._install()
        # a joiner starts with an empty datadir and receives node 1's by SST (users, schema, files)

    def _server_argv(self) -> list[str]:
        extra = ["--wsrep-new-cluster"] if self.bootstrap else []
        return super()._server_argv() + extra + ([f"--wsrep_start_position={self.start_position}"]
                                                 if self.start_position else [])


class GaleraCluster(GaleraFacts, GaleraNode):
    """The cluster as one instance: node 1 (where the workload connects) owning nodes 2..N."""

    def __init__(self, config: Config, workdir: Path, engine: GaleraEngine,
                 database: str = DEFAULT_DATABASE) -> None:
        count = gs.node_count({**gs.OWN, **config.settings})
        ports = gs.allocate(count, gs.port_range(config.settings))
        super().__init__(config, workdir, engine, database, 0, ports)
        self.cluster_link = Path(workdir) / config.label
        self.cluster_root: Path | None = None
        self.peers = [GaleraNode(config, workdir, engine, database, i, ports) for i in range(1, count)]
        self.down: set[int] = set()
        for peer in self.peers:
            peer.share(self)

    @property
    def nodes(self) -> list[GaleraNode]:
        return [self, *self.peers]

    def cluster(self) -> GaleraRejoin:
        """Nodes 2..N killed and rejoined by ``--fault kill-node``."""
        return GaleraRejoin(self)

    def threats(self) -> GaleraThreats:
        """The threat-model probes of every node."""
        return GaleraThreats(self)

    def key_rotation(self) -> None:
        """Not on a cluster: each node's threads would rotate its own copy (not tried)."""
        return None

    def take_keys(self, access: KeyAccess) -> None:
        """Every node takes the cluster's keys from the same key path, with the twin's token."""
        super().take_keys(access)
        for peer in self.peers:
            peer.share(self)

    # paths -------------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        """The cluster directory: every node's instance directory (the at-rest scan covers them all)."""
        if self.cluster_root is None:
            raise EnvironmentProblem(f"{self.config.label}: the cluster has not been started", "call start() first")
        return self.cluster_root

    def _make_cluster_root(self) -> Path:
        link = self.cluster_link
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink():
            link.unlink()
        if link.exists():
            raise EnvironmentProblem(f"{link} already exists (a kept instance?)", "remove it or use another work "
                                     "directory")
        if self.user is None or traversable_by(link.parent, self.user.pw_uid, self.user.pw_gid):
            link.mkdir(mode=0o700)
            return link
        base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path(tempfile.gettempdir())
        root = own_path(Path(tempfile.mkdtemp(prefix=f"tdebench-inst-{self.config.label}-", dir=base)))
        link.symlink_to(root, target_is_directory=True)
        self.relocated = (f"{link.parent} is not traversable by the service user '{self.user.pw_name}'; "
                          f"cluster created in {root}")
        return root

    # lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Node 1 first (it bootstraps the primary component), then each joiner in turn."""
        if self.cluster_root is None:
            self.cluster_root = self._make_cluster_root()
            os.chmod(self.cluster_root, 0o700)
            if self.user is not None:
                os.chown(self.cluster_root, self.user.pw_uid, self.user.pw_gid)
            for node in self.nodes:
                node.place(self.cluster_root)
            if self.transport == "tls":
                self.tls = make_tls(self.cluster_root / "tls", self.config.label, self.user)
                for peer in self.peers:
                    peer.tls = self.tls
        try:
            super().start()
            for peer in self.peers:
                self._start_peer(peer)
            self.down.clear()
        except BaseException:
            self._stop_peers(discard=True)
            raise

    def _start_peer(self, peer: GaleraNode) -> None:
        """Start a joiner and wait until it is ``Synced``: it accepts connections while still joining, and answers
        every statement then with "WSREP has not yet prepared node for application use" (seen in a loaded test
        run). One that aborts during start-up (seen after a restore: SIGABRT of node 2 while joining) or does not
        reach ``Synced`` starts once more from an empty data directory, by a whole state transfer."""
        try:
            with self.donor_keys(peer):
                peer.start()
                wait_synced(peer, time.monotonic() + SYNC_TIMEOUT)
            return
        except EnvironmentProblem:
            with contextlib.suppress(Exception):
                peer.stop()
        shutil.rmtree(peer.datadir, ignore_errors=True)
        peer.datadir.mkdir(mode=0o700)
        if peer.user is not None:
            os.chown(peer.datadir, peer.user.pw_uid, peer.user.pw_gid)
        with self.donor_keys(peer):
            peer.start()
            wait_synced(peer, time.monotonic() + SYNC_TIMEOUT)

    @contextlib.contextmanager
    def donor_keys(self, joiner: GaleraNode) -> Iterator[None]:
        """mariabackup SST of a TDE cluster: the running nodes' file keys readable while ``joiner`` starts (the
        donor's mariabackup loads the key plugin itself); removed afterwards. No-op for rsync or plain."""
        with contextlib.ExitStack() as stack:
            if self.sst == "mariabackup" and self.encrypted:
                for node in self.nodes:
                    if node is not joiner and MariadbInstance.running(node):
                        stack.enter_context(node.key_material())
            yield

    def resize_cache(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        """Every node's buffer pool (node 1 reports it), then a restart of the cluster."""
        for peer in self.peers:
            peer.options["innodb_buffer_pool_size"] = str(buffer_pool_bytes(cache_bytes))
            if page_source == "memory":
                use_buffered_reads(peer.options)
            if peer.root is not None:
                peer._path("my.cnf").write_text(peer._render_cnf())
        return super().resize_cache(cache_bytes, page_source)

    def client_nodes(self) -> int:
        return len(self.nodes)

    def connect_node(self, index: int, causal: bool = False) -> Any:
        """Node ``index``'s connection; ``causal``: ``wsrep_sync_wait = 1``, so its reads wait until the node has
        applied every write set the cluster committed before them (other nodes apply write sets asynchronously),
        and a node being rejoined after a fault is waited for until it is ``Synced``."""
        deadline = time.monotonic() + 2 * SYNC_TIMEOUT  # its recovery, then its transfer
        while causal and index + 1 in self.down and time.monotonic() < deadline:
            time.sleep(0.2)
        conn = MariadbInstance.connect(self.nodes[index])
        if causal:
            cur = conn.cursor()
            cur.execute("SET SESSION wsrep_sync_wait = 1")
        return conn

    def running(self) -> bool:
        return all(MariadbInstance.running(n) for n in self.nodes)

    def alive(self) -> bool:
        """Every node runs but those killed on purpose (a fault in a trial) and not rejoined yet."""
        return all(MariadbInstance.running(n) for k, n in enumerate(self.nodes, 1) if k not in self.down)

    def stop(self) -> None:
        """Joiners first, node 1 last: node 1 then holds the last state and may bootstrap the next start."""
        self._stop_peers(discard=False)
        super().stop()

    def _stop_peers(self, discard: bool) -> None:
        errors: list[BaseException] = []
        for peer in reversed(self.peers):
            try:
                peer._stop(discard)
            except Exception as exc:  # noqa: BLE001 - stop the others, raise the first afterwards
                errors.append(exc)
        if errors:
            raise errors[0]

    def destroy(self) -> None:
        try:
            for peer in reversed(self.peers):
                peer.destroy()
        finally:
            super().destroy()
            remove_tls(self.tls)  # kept clusters too: keys never outlive the run
            if not self.config.keep and self.cluster_root is not None:
                shutil.rmtree(self.cluster_root, ignore_errors=True)
                if self.cluster_link.is_symlink():
                    self.cluster_link.unlink()
                self.cluster_root = None

    def server_pids(self) -> list[int]:
        return [pid for node in self.nodes for pid in MariadbInstance.server_pids(node)]

    def flush_to_disk(self) -> None:
        for node in self.nodes:
            MariadbInstance.flush_to_disk(node)

    def storage_bytes(self) -> int:
        """Bytes of every node's data directory (gcache included)."""
        return sum(MariadbInstance.storage_bytes(n) for n in self.nodes)

    def check_encrypted(self, schema_tables: list[str], timeout: float = 300.0, grace: float = 20.0) -> None:
        for node in self.nodes:
            MariadbInstance.check_encrypted(node, schema_tables, timeout, grace)


__all__ = ["GaleraCluster", "GaleraEngine", "GaleraNode"]
