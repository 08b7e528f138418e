"""What a Galera cluster says about itself, per node: wsrep status, provider options (is there gcache
encryption?), encryption status of every node, the replication counters (a mixin of
:class:`tdebench.engines.mariadb.galera.GaleraCluster`), and the threat-model probes that span the nodes
(:class:`GaleraThreats`).

galera-4 26.4 of Debian offers no ``gcache.*`` encryption option (its ``wsrep_provider_options`` list none;
gcache encryption is in MariaDB Enterprise's Galera and Percona XtraDB Cluster 8.0): write sets in
``galera.cache`` are then the rows in clear, whatever the tables' encryption. The at-rest verdict counts the
gcache outside the TDE scope (it is no file MariaDB encrypts) and says how many canary hits it holds; the
threat model's ``gcache`` facts come from :meth:`GaleraThreats.replication_cache`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tdebench.encryption import EncryptionSpec
from tdebench.engines.mariadb import settings as ms
from tdebench.engines.mariadb.support import close_quietly, global_status
from tdebench.engines.mariadb.threats import MariadbThreats

GCACHE = "data/galera.cache"
#: the ring buffer and its overflow pages (write sets that do not fit the ring go to gcache.page.NNNNNN)
GCACHE_FILES = ("node*/data/galera.cache", "node*/data/gcache.page.*")
_WSREP_STATUS = ("wsrep_cluster_size", "wsrep_cluster_status", "wsrep_local_state_comment", "wsrep_ready",
                 "wsrep_connected", "wsrep_local_cert_failures", "wsrep_local_bf_aborts",
                 "wsrep_flow_control_paused_ns", "wsrep_flow_control_sent", "wsrep_flow_control_recv",
                 "wsrep_last_committed", "wsrep_provider_version")


def provider_options(text: str) -> dict[str, str]:
    """``wsrep_provider_options`` (``a = b; c = d``) as a dict."""
    out = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def gcache_encryption(options: dict[str, str]) -> dict[str, Any]:
    """Whether the provider offers gcache encryption, read from its options (never assumed)."""
    names = sorted(k for k in options if k.startswith("gcache.") and "encrypt" in k)
    if not names:
        return {"offered": False, "reason": "the provider lists no gcache.*encrypt* option in "
                                            "wsrep_provider_options: write sets stay in clear in galera.cache"}
    on = any(options[k].lower() in ("yes", "on", "true", "1") for k in names)
    return {"offered": True, "enabled": on, "options": {k: options[k] for k in names}}


class GaleraFacts:
    """Cluster-wide facts (mixin; the cluster provides ``nodes``, ``data_dir``)."""

    nodes: list[Any]
    config: Any
    _counter_conn: Any
    down: set[int]

    # per node ------------------------------------------------------------------------------------------
    def node_status(self, node: Any) -> dict[str, Any]:
        """wsrep status and provider facts of one node."""
        conn = node._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(["%s"] * len(_WSREP_STATUS)) + ")",
                        _WSREP_STATUS)
            status = {str(k): str(v) for k, v in cur.fetchall()}
            cur.execute("SELECT @@GLOBAL.wsrep_provider_options, @@GLOBAL.wsrep_sst_method")
            options_text, sst = cur.fetchone()
        finally:
            close_quietly(conn)
        options = provider_options(str(options_text))
        return {"node": node.node_name, "status": status, "sst_method": str(sst),
                "gcache": {"file": f"{node.node_name}/{GCACHE}", "size": options.get("gcache.size"),
                           "encryption": gcache_encryption(options)},
                "replication_tls": options.get("socket.ssl", "NO")}

    def cluster_status(self) -> dict[str, Any]:
        return {n.node_name: self.node_status(n) for n in self.nodes}

    # Instance hooks --------------------------------------------------------------------------------------
    def encryption_status(self) -> dict[str, Any]:
        """Node 1's encryption status (as the mariadb engine reports it), every node's own, the cluster's state
        and the gcache's encryption."""
        first = self.nodes[0]
        status = dict(first._collect_status()[0])
        per_node = {}
        for node in self.nodes:
            own = status if node is first else node._collect_status()[0]
            facts = self.node_status(node)
            per_node[node.node_name] = {
                "enabled": own["enabled"], "plugin": own["plugin"],
                "tablespaces_encrypted": len(own["tablespaces"]["encrypted"]),
                "tablespaces_unencrypted": own["tablespaces"]["unencrypted"],
                "cluster_size": facts["status"].get("wsrep_cluster_size"),
                "state": facts["status"].get("wsrep_local_state_comment"),
                "gcache_encryption": facts["gcache"]["encryption"], "sst_method": facts["sst_method"]}
        status["enabled"] = all(p["enabled"] for p in per_node.values())
        status["nodes"] = per_node
        status["gcache_encrypted"] = all(p["gcache_encryption"].get("enabled", False) for p in per_node.values())
        return status

    def settings(self) -> dict[str, Any]:
        out = super().settings()  # type: ignore[misc]
        out["nodes"] = len(self.nodes)
        out["workload_connects_to"] = "node 1, or every node where the workload spreads (tpcc/sysbench spread=all)"
        out["sst_method"] = f"{self.sst} (as the service user)"
        out["gcache_size"] = self.config.settings.get("gcache_size", "64M")
        out["listen"] = "127.0.0.1 (tcp), one port set per node"
        return out

    def counters(self) -> dict[str, float]:
        """Node 1's InnoDB counters plus the cluster's certification failures and flow-control pauses (sums
        over the nodes, read through a connection of each node)."""
        out = super().counters()  # type: ignore[misc]
        cert = paused = 0
        for number, node in enumerate(self.nodes, 1):
            if number in self.down:  # killed by a fault and not rejoined: its counters restart with it
                continue
            values = global_status(node, ("wsrep_local_cert_failures", "wsrep_flow_control_paused_ns"))
            cert += int(values.get("wsrep_local_cert_failures", 0))
            paused += int(values.get("wsrep_flow_control_paused_ns", 0))
        out["cert_failures"] = cert
        out["flow_control_paused_ns"] = paused
        return out

    def files_outside_scope(self) -> list[str]:
        """Each node's files outside the spec's scope, and the gcache when the provider does not encrypt it."""
        own = [f"node*/{g}" for g in outside_of_node(self.config.spec)]
        return own + ([] if self.config.spec.is_plain else list(GCACHE_FILES))


class GaleraThreats(MariadbThreats):
    """The threat-model probes of a whole cluster (a GaleraCluster: node 1 and its ``nodes``): every node's files,
    node 1's client TLS beside the traffic between the nodes, and the replication cache."""

    def disk_paths(self) -> list[Path]:
        """The cluster directory (every node's) and socket directories kept elsewhere."""
        sockets = [n._socket_dir for n in self.instance.nodes if n._socket_dir is not None]
        return [self.instance.data_dir, *sockets]

    def data_dir_parts(self) -> dict[str, list[str]]:
        return {"datadir": ["node*/data/*"], "redo": ["node*/data/ib_logfile*"],
                "temp": ["node*/data/ibtmp1", "node*/tmp/*"], "gcache": list(GCACHE_FILES)}

    def temp_locations(self) -> list[Path]:
        return [n._path(*p) for n in self.instance.nodes for p in (("tmp",), ("data", "ibtmp1"))]

    def transport_security(self) -> dict[str, Any]:
        """Client TLS of node 1 (as mariadb; the ``network`` threat row) and, apart, the traffic between the nodes
        (``replication``: the provider's ``socket.ssl`` on every node; the ``replication`` row)."""
        out = super().transport_security()
        cluster = self.instance
        replication = {n.node_name: cluster.node_status(n)["replication_tls"] for n in cluster.nodes}
        on = all(str(v).upper() in ("YES", "1", "TRUE", "ON") for v in replication.values())
        out["listen"] = f"{out.get('listen')} (node 1)"
        sst = (("the mariabackup SST stream too (socat with OpenSSL)" if cluster.sst == "mariabackup"
                else "the rsync SST stream is not encrypted (that needs stunnel)") if on else "so does the SST stream")
        out["replication"] = {"tls": on, "settings": "socket.ssl=" + ",".join(sorted(set(replication.values()))),
                              "per_node": replication,
                              "what": f"group communication, write sets (rows) and IST over loopback TCP; {sst}"}
        return out

    def replication_cache(self) -> dict[str, Any]:
        """The gcache of every node: file globs (relative to data_dir) and whether the provider encrypts it."""
        cluster = self.instance
        facts = cluster.node_status(cluster.nodes[0])
        joiners = [f"{n.node_name}/data/*" for n in cluster.nodes[1:]]
        return {"globs": list(GCACHE_FILES), "encryption": facts["gcache"]["encryption"],
                "what": "Galera's cache of recent write sets (galera.cache and its overflow pages gcache.page.*), "
                        "one per node",
                "transfer_globs": joiners, "transfer": f"{facts['sst_method']} SST of node 1's data directory, "
                f"then write sets; {self._sst_stream()}"}

    def _sst_stream(self) -> str:
        if self.instance.tls is not None and self.instance.sst == "mariabackup":
            return "the SST stream is encrypted (TLS, socat with OpenSSL)"
        return "the SST stream itself is not encrypted (no TLS)"


def outside_of_node(spec: EncryptionSpec) -> list[str]:
    """Globs relative to a node's directory that the spec's scope leaves plaintext (as the mariadb engine's)."""
    globs = ms.files_outside_scope(spec)
    return [g[3:] if g.startswith("../") else f"data/{g}" for g in globs]
