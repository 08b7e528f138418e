"""A node of a running cluster killed and rejoined (the :class:`~tdebench.api.cluster.Cluster` a
:class:`tdebench.engines.mariadb.galera.GaleraCluster` returns):
SIGKILL, then a start that receives the missed write sets by IST from a donor's gcache, or a whole state
transfer (SST) when the node's data is gone. The rejoin is timed until the node reports ``Synced``; the kind of
transfer is read from the node's log, never assumed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from typing import Any

from tdebench.api.cluster import Cluster
from tdebench.engines.mariadb.galera_settings import DEFAULT_NODES
from tdebench.engines.mariadb.support import close_quietly, global_status
from tdebench.engines.mariadb.watchdog import log_size
from tdebench.engines.toolkit.process import run_group
from tdebench.errors import EnvironmentProblem, UsageError

SYNC_TIMEOUT = 180.0
_RECOVERED = re.compile(r"WSREP: Recovered position: ([0-9a-f-]{36}:-?\d+)")
# the SST script runs for both; it says which it did ("rsync IST completed on joiner" / "rsync SST completed ...")
_SST = re.compile(r"SST completed on joiner")
_IST = re.compile(r"IST completed on joiner|Receiving IST: \d+ writesets")


def transfer_kind(log_text: str) -> str:
    """``SST``, ``IST`` or ``none`` (a node whose state was current), from the log lines of one start."""
    if _SST.search(log_text):
        return "SST"
    if _IST.search(log_text):
        return "IST"
    return "none"


def recovered_position(node: Any) -> str:
    """``uuid:seqno`` that ``mariadbd --wsrep-recover`` reads from InnoDB after a crash ("" if none): a node
    started without it asks for a whole SST, since its grastate.dat says seqno -1."""
    log = node._path("recover.log")
    log.unlink(missing_ok=True)
    argv = [*node._server_argv(), "--wsrep-recover", f"--log-error={log}"]
    node._secrets()  # the redo log and tablespaces may be encrypted: InnoDB needs the key to recover
    try:
        run_group(argv, node._path("recover.out"), node.user, timeout=SYNC_TIMEOUT)
    except subprocess.CalledProcessError:
        return ""
    finally:
        node._forget_secrets()
    found = _RECOVERED.findall(log.read_text(errors="replace")) if log.is_file() else []
    return found[-1] if found else ""


class GaleraRejoin(Cluster):
    """Kill and rejoin a node of ``cluster`` (a GaleraCluster: its ``nodes``, the set ``down`` of the nodes killed
    and not yet rejoined, and ``donor_keys``)."""

    default_nodes = DEFAULT_NODES

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    @property
    def nodes(self) -> list[Any]:
        return list(self.cluster.nodes)

    @property
    def down(self) -> set[int]:
        return self.cluster.down

    def size(self) -> int:
        return len(self.nodes)

    def _joiner(self, number: int) -> Any:
        if not 2 <= number <= len(self.nodes):
            raise UsageError(f"node {number} cannot be killed and rejoined", f"give a node from 2 to {len(self.nodes)} "
                             "(node 1 is where the workload connects)")
        return self.nodes[number - 1]

    def kill_node(self, number: int) -> None:
        """SIGKILL node ``number`` (2..N) and every process of its tree, as a crash would."""
        node = self._joiner(number)
        self.down.add(number)
        server, node._server = node._server, None
        node.close_counters()
        if server is not None:
            server.kill()

    def rejoin_node(self, number: int, full_transfer: bool = False) -> dict[str, Any]:
        """Start node ``number`` again and wait until it is ``Synced``; ``full_transfer`` first deletes its data
        directory, so that it needs an SST. Facts: the transfer kind (from the log), seconds to Synced,
        the files it received."""
        node = self._joiner(number)
        if node.running():
            raise UsageError(f"node {number} is running", "kill it first (kill_node)")
        if full_transfer:
            shutil.rmtree(node.datadir)
            node.datadir.mkdir(mode=0o700)
            if node.user is not None:
                os.chown(node.datadir, node.user.pw_uid, node.user.pw_gid)
        started = time.monotonic()
        evicted = self._wait_evicted(started + SYNC_TIMEOUT)
        since = log_size(node.log_path)
        position = "" if full_transfer else recovered_position(node)  # as systemd's galera_recovery does
        node.start_position = position
        try:
            with self.cluster.donor_keys(node):
                node._launch()
        finally:
            node.start_position = ""
        wait_synced(node, started + SYNC_TIMEOUT)
        seconds = time.monotonic() - started
        self.down.discard(number)
        with open(node.log_path, "rb") as handle:
            handle.seek(since)
            text = handle.read().decode(errors="replace")
        files = [str(p.relative_to(node.datadir)) for p in node.datadir.rglob("*") if p.is_file()]
        return {"node": node.node_name, "transfer": transfer_kind(text), "seconds_to_synced": round(seconds, 3),
                "seconds_to_evicted": round(evicted, 3),
                "full_transfer_forced": full_transfer, "position_recovered": position or None,
                "files_received": len(files)}

    def _wait_evicted(self, deadline: float) -> float:
        """Seconds until node 1 sees a primary component without the killed nodes (the others suspect a silent
        node for ``evs.suspect_timeout``, 5 s, and commits wait meanwhile): a crashed node is not back within a
        second, and one restarted before its old self left the view was seen to rejoin without any transfer
        while node 1 refused statements (1047)."""
        started, want = time.monotonic(), str(len(self.nodes) - len(self.down))
        while time.monotonic() < deadline:
            try:
                status = global_status(self.nodes[0], ("wsrep_cluster_size", "wsrep_cluster_status"))
                if status.get("wsrep_cluster_size") == want and status.get("wsrep_cluster_status") == "Primary":
                    break
            except Exception:  # noqa: BLE001 - node 1 between views: ask again
                pass
            time.sleep(0.2)
        return time.monotonic() - started

    def committed_count(self) -> int:
        """Write sets the cluster has committed (node 1's ``wsrep_last_committed``: every node's commits)."""
        conn = self.nodes[0]._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep_last_committed'")
            row = cur.fetchone()
        finally:
            close_quietly(conn)
        return int(row[1]) if row else 0


def wait_synced(node: Any, deadline: float) -> None:
    """Wait until ``node`` reports ``Synced``; EnvironmentProblem at ``deadline``."""
    state = "unknown"
    while time.monotonic() < deadline:
        try:
            conn = node._connect(timeout=5, use_database=False)
            try:
                cur = conn.cursor()
                cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'")
                row = cur.fetchone()
                state = str(row[1]) if row else "unknown"
            finally:
                close_quietly(conn)
            if state == "Synced":
                return
        except Exception:  # noqa: BLE001 - not accepting connections yet
            pass
        time.sleep(0.2)
    raise EnvironmentProblem(f"{node.node_name} did not reach Synced within {SYNC_TIMEOUT:.0f} s (state {state})",
                             f"look at {node.log_path}")
