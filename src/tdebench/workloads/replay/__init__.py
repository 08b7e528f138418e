"""``--workload replay``: a server's statement log replayed against every twin with its sessions, their order and
their think times (docs/workloads/replay.md)."""
