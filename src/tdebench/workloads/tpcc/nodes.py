"""After a trial on a cluster: every node holds the same data as node 1 (row counts of every table and sums of
the columns transactions change), read with causal reads so that a node still applying write sets is waited for,
not reported as different."""

from __future__ import annotations

from typing import Any

from tdebench.api.engine import Instance
from tdebench.workloads.tpcc.smoke import data_digest


def node_digests(instance: Instance) -> list[dict[str, Any]]:
    """The data digest of every node that serves clients (one entry for a single server)."""
    out = []
    for index in range(instance.client_nodes()):
        conn = instance.connect_node(index, causal=True)
        try:
            out.append(data_digest(conn))
        finally:
            conn.close()
    return out


def differences(digests: list[dict[str, Any]]) -> list[str]:
    """One line per node whose digest differs from node 1's, naming the first differing figures."""
    first, out = digests[0], []
    for number, digest in enumerate(digests[1:], 2):
        keys = [k for k in sorted(set(first) | set(digest)) if first.get(k) != digest.get(k)]
        if keys:
            shown = ", ".join(f"{k} {digest.get(k)} vs {first.get(k)}" for k in keys[:3])
            out.append(f"node {number} differs from node 1 in {len(keys)} figure(s): {shown}")
    return out
