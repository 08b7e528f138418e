"""A cluster's nodes as a capability object: what a fault injected into a trial does to them (``--fault``).

An instance whose database is a cluster returns a :class:`Cluster` from
:meth:`tdebench.api.engine.Instance.cluster` (None: a single server or an embedded database, the default), and its
engine names the class once in :attr:`tdebench.api.engine.Engine.cluster_type`; the faults the engine can suffer
(:attr:`tdebench.api.engine.Engine.faults`) and its default node count
(:attr:`tdebench.api.engine.Engine.cluster_nodes`) follow from that class, so that ``--fault`` and ``--nodes`` are
refused before any work for an engine without one. :mod:`tdebench.runner.faults` kills a node, rejoins it and
counts the commits meanwhile.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from tdebench.api.faults import KILL_NODE


class Cluster(ABC):
    """The nodes of one running cluster instance: node 1 serves the workload's connections, 2..:meth:`size` may be
    killed and rejoined while it serves."""

    #: the faults of :mod:`tdebench.api.faults` a cluster of this class can suffer during a trial
    faults: ClassVar[tuple[str, ...]] = (KILL_NODE,)
    #: how many nodes an instance has unless ``--nodes`` (setting ``nodes``) says otherwise
    default_nodes: ClassVar[int] = 3

    @abstractmethod
    def size(self) -> int:
        """How many nodes the cluster has (the last is the one a fault kills unless told otherwise)."""

    @abstractmethod
    def kill_node(self, number: int) -> None:
        """SIGKILL node ``number`` (2..:meth:`size`), as a crash would; the instance's ``alive()`` stays True while
        the other nodes run."""

    @abstractmethod
    def rejoin_node(self, number: int, full_transfer: bool = False) -> dict[str, Any]:
        """Start a killed node again and return once it serves; ``full_transfer``: from an empty data directory.
        Facts: at least ``transfer`` (how it caught up) and ``seconds_to_synced``."""

    @abstractmethod
    def committed_count(self) -> int:
        """Transactions committed so far as the cluster counts them (a fault's throughput meanwhile)."""
