"""Restart a PostgreSQL cluster with the same pages in shared_buffers (pg_buffercache before, pg_prewarm after).

Which blocks of which of the benchmark database's relations are cached is read from ``pg_buffercache``, created
in the ``postgres`` maintenance database so the benchmark database gets no view of it; after the restart
``pg_prewarm`` (created in a schema of its own, ``tdebench_warm``, so the workload's schema stays as it was)
reads the same block ranges back into shared_buffers. The OS page cache outlives the restart either way.
"""

from __future__ import annotations

from typing import Any

FORKS = {0: "main", 1: "fsm", 2: "vm", 3: "init"}
SCHEMA = "tdebench_warm"

_CACHED = """
SELECT relfilenode, relforknumber, relblocknumber FROM pg_buffercache
WHERE reldatabase = (SELECT oid FROM pg_database WHERE datname = %s) AND relfilenode IS NOT NULL
ORDER BY 1, 2, 3
"""


def cached_blocks(maintenance: Any, database: str) -> dict[tuple[int, int], list[int]]:
    """(relfilenode, fork) -> sorted cached block numbers of ``database``, read from the maintenance database."""
    maintenance.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
    out: dict[tuple[int, int], list[int]] = {}
    for node, fork, block in maintenance.execute(_CACHED, [database]).fetchall():
        out.setdefault((int(node), int(fork)), []).append(int(block))
    return out


def ranges(blocks: list[int]) -> list[tuple[int, int]]:
    """Sorted block numbers as (first, last) runs: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    out: list[tuple[int, int]] = []
    for block in blocks:
        if out and block == out[-1][1] + 1:
            out[-1] = (out[-1][0], block)
        else:
            out.append((block, block))
    return out


def prewarm(conn: Any, cached: dict[tuple[int, int], list[int]]) -> int:
    """Read the cached block ranges back into shared_buffers; the number of blocks read."""
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    conn.execute(f"CREATE EXTENSION IF NOT EXISTS pg_prewarm SCHEMA {SCHEMA}")
    loaded = 0
    for (node, fork), blocks in cached.items():
        row = conn.execute("SELECT pg_filenode_relation(0, %s)::oid", [node]).fetchone()
        if not row or row[0] is None:  # a relation dropped or rewritten since (e.g. a refresh's temp table)
            continue
        for first, last in ranges(blocks):
            loaded += int(conn.execute(f"SELECT {SCHEMA}.pg_prewarm(%s::oid::regclass, 'buffer', %s, %s, %s)",
                                       [row[0], FORKS[fork], first, last]).fetchone()[0])
    return loaded
